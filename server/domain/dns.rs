//! The DNS look-ups of the own-domain route: the hostname's addresses (A and AAAA, and whether it is
//! an alias) and its relevant CAA set (RFC 8659: the CAA records of the closest name, climbing from
//! the hostname towards the top-level domain). A small client over UDP (TCP when an answer is
//! truncated) to one recursive resolver: the system's (`/etc/resolv.conf`) or the one the owner
//! names, which is also how tests point it at a local DNS server.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use hickory_proto::op::{Message, Query, ResponseCode};
use hickory_proto::rr::{Name, RData, RecordType};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpStream, UdpSocket};

use super::caa::CaaRecord;

/// How long one query waits for its answer.
const TIMEOUT: Duration = Duration::from_secs(3);
/// Queries are sent this many times over UDP before giving up.
const TRIES: usize = 2;

/// Why a look-up failed.
#[derive(Debug, thiserror::Error)]
pub enum DnsError {
    #[error("the DNS server {server} did not answer: {reason}")]
    Unreachable { server: SocketAddr, reason: String },
    #[error("the DNS server {server} answered {code} for {name} ({kind})")]
    Failed {
        server: SocketAddr,
        name: String,
        kind: RecordType,
        code: ResponseCode,
    },
    #[error("\"{0}\" is not a host name")]
    BadName(String),
}

/// A recursive resolver to ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resolver {
    pub server: SocketAddr,
}

/// What a hostname resolves to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Addresses {
    pub ips: Vec<IpAddr>,
    /// The name it is an alias of, when the answer is a CNAME.
    pub alias_of: Option<String>,
}

impl Resolver {
    /// The first name server of the system's `/etc/resolv.conf`.
    pub fn system() -> Result<Resolver, String> {
        let text = std::fs::read_to_string("/etc/resolv.conf")
            .map_err(|e| format!("could not read /etc/resolv.conf for a DNS server ({e}); name one with --resolver"))?;
        first_nameserver(&text)
            .map(|server| Resolver { server })
            .ok_or_else(|| "/etc/resolv.conf names no DNS server; name one with --resolver".into())
    }

    /// The hostname's A and AAAA records, and whether it is an alias.
    pub async fn addresses(&self, hostname: &str) -> Result<Addresses, DnsError> {
        let name = parse_name(hostname)?;
        let mut found = Addresses::default();
        for kind in [RecordType::A, RecordType::AAAA] {
            let answer = self.query(&name, kind).await?;
            if answer.metadata.response_code == ResponseCode::NXDomain {
                return Ok(Addresses::default());
            }
            for record in &answer.answers {
                match &record.data {
                    RData::A(a) => found.ips.push(IpAddr::V4(a.0)),
                    RData::AAAA(aaaa) => found.ips.push(IpAddr::V6(aaaa.0)),
                    RData::CNAME(target) if record.name.to_lowercase() == name.to_lowercase() => {
                        found.alias_of = Some(target.0.to_ascii().trim_end_matches('.').to_string());
                    }
                    _ => {}
                }
            }
        }
        found.ips.sort();
        found.ips.dedup();
        Ok(found)
    }

    /// The relevant CAA set: that of the hostname, else of its parent, and so on up to (not
    /// including) the root. Answers the name that holds it and its records (none anywhere: empty).
    pub async fn caa_set(&self, hostname: &str) -> Result<(String, Vec<CaaRecord>), DnsError> {
        let mut name = parse_name(hostname)?;
        while !name.is_root() {
            let answer = self.query(&name, RecordType::CAA).await?;
            let records: Vec<CaaRecord> = answer
                .answers
                .iter()
                .filter_map(|record| match &record.data {
                    RData::CAA(caa) => Some(CaaRecord {
                        critical: caa.issuer_critical,
                        tag: caa.tag.clone(),
                        value: String::from_utf8_lossy(&caa.value).into_owned(),
                    }),
                    _ => None,
                })
                .collect();
            if !records.is_empty() {
                return Ok((name.to_ascii().trim_end_matches('.').to_string(), records));
            }
            name = name.base_name();
        }
        Ok((String::new(), Vec::new()))
    }

    /// One question; NOERROR and NXDOMAIN are answers, any other code is an error.
    async fn query(&self, name: &Name, kind: RecordType) -> Result<Message, DnsError> {
        let mut question = Message::query();
        question.add_query(Query::query(name.clone(), kind));
        question.metadata.recursion_desired = true;
        let bytes = question.to_vec().map_err(|e| self.unreachable(e.to_string()))?;
        let mut answer = None;
        let mut last = String::new();
        for _ in 0..TRIES {
            match tokio::time::timeout(TIMEOUT, self.over_udp(&bytes, question.metadata.id)).await {
                Ok(Ok(message)) => {
                    answer = Some(message);
                    break;
                }
                Ok(Err(reason)) => last = reason,
                Err(_) => last = format!("no answer within {} seconds", TIMEOUT.as_secs()),
            }
        }
        let mut answer = answer.ok_or_else(|| self.unreachable(last))?;
        if answer.metadata.truncation {
            answer = tokio::time::timeout(TIMEOUT, self.over_tcp(&bytes))
                .await
                .map_err(|_| self.unreachable("no answer over TCP".into()))?
                .map_err(|reason| self.unreachable(reason))?;
        }
        match answer.metadata.response_code {
            ResponseCode::NoError | ResponseCode::NXDomain => Ok(answer),
            code => Err(DnsError::Failed {
                server: self.server,
                name: name.to_ascii(),
                kind,
                code,
            }),
        }
    }

    async fn over_udp(&self, bytes: &[u8], id: u16) -> Result<Message, String> {
        let local = if self.server.is_ipv4() {
            SocketAddr::from(([0u8; 4], 0))
        } else {
            SocketAddr::from(([0u16; 8], 0))
        };
        let socket = UdpSocket::bind(local).await.map_err(|e| e.to_string())?;
        socket.connect(self.server).await.map_err(|e| e.to_string())?;
        socket.send(bytes).await.map_err(|e| e.to_string())?;
        let mut buffer = vec![0u8; 4096];
        loop {
            let n = socket.recv(&mut buffer).await.map_err(|e| e.to_string())?;
            // An answer to another question (a late one, or spoofed) is not this one's.
            match Message::from_vec(&buffer[..n]) {
                Ok(message) if message.metadata.id == id => return Ok(message),
                _ => continue,
            }
        }
    }

    async fn over_tcp(&self, bytes: &[u8]) -> Result<Message, String> {
        let mut stream = TcpStream::connect(self.server).await.map_err(|e| e.to_string())?;
        let length = u16::try_from(bytes.len()).map_err(|_| "the question is too long".to_string())?;
        stream
            .write_all(&length.to_be_bytes())
            .await
            .map_err(|e| e.to_string())?;
        stream.write_all(bytes).await.map_err(|e| e.to_string())?;
        let mut length = [0u8; 2];
        stream.read_exact(&mut length).await.map_err(|e| e.to_string())?;
        let mut buffer = vec![0u8; usize::from(u16::from_be_bytes(length))];
        stream.read_exact(&mut buffer).await.map_err(|e| e.to_string())?;
        Message::from_vec(&buffer).map_err(|e| e.to_string())
    }

    fn unreachable(&self, reason: String) -> DnsError {
        DnsError::Unreachable {
            server: self.server,
            reason,
        }
    }
}

fn parse_name(hostname: &str) -> Result<Name, DnsError> {
    let mut name = Name::from_ascii(hostname).map_err(|_| DnsError::BadName(hostname.into()))?;
    name.set_fqdn(true);
    Ok(name)
}

/// The first `nameserver` line of a resolv.conf, on port 53.
pub fn first_nameserver(text: &str) -> Option<SocketAddr> {
    text.lines()
        .map(|line| line.split(['#', ';']).next().unwrap_or("").trim())
        .filter_map(|line| line.strip_prefix("nameserver"))
        .filter(|rest| rest.starts_with([' ', '\t']))
        .filter_map(|rest| rest.trim().split('%').next()?.parse::<IpAddr>().ok())
        .map(|ip| SocketAddr::new(ip, 53))
        .next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_first_name_server() {
        let text = "# made by NetworkManager\nsearch home\nnameserverx 1.1.1.1\nnameserver   192.168.1.1 # router\nnameserver 9.9.9.9\n";
        assert_eq!(first_nameserver(text), Some("192.168.1.1:53".parse().unwrap()));
        assert_eq!(
            first_nameserver("nameserver fe80::1%eth0\n"),
            Some("[fe80::1]:53".parse().unwrap())
        );
        assert_eq!(first_nameserver("; nameserver 1.1.1.1\noptions edns0\n"), None);
        assert_eq!(first_nameserver("nameserver not-an-ip\n"), None);
    }

    #[test]
    fn names_are_checked() {
        assert!(parse_name("journal.example.org").is_ok());
        assert!(parse_name("bad name.example").is_err());
    }
}
