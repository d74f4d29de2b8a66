//! The CAA rule of the own-domain route (RFC 8659, with the account and method parameters of
//! RFC 8657): the hostname's relevant CAA set must exist and allow exactly one issuer, the ACME CA
//! the route uses, for exactly this journal's ACME account and the validation method it answers.
//! Anyone else who controls a web server at the hostname's address (a previous tenant of a cloud IP,
//! a compromised router) then cannot get a certificate for it from any CA.
//!
//! Plain functions over the records; the DNS queries are `dns`'s.

/// One CAA record: flags (critical or not), tag, value (RFC 8659 section 4.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaaRecord {
    pub critical: bool,
    pub tag: String,
    pub value: String,
}

/// What the route needs the CAA set to allow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted<'a> {
    /// The CA's CAA identity (`letsencrypt.org`).
    pub issuer: &'a str,
    /// This journal's ACME account URL.
    pub account: &'a str,
    /// The validation method the route answers (`tls-alpn-01`).
    pub method: &'a str,
}

impl Wanted<'_> {
    /// The record the owner sets, in zone-file form, for `hostname`.
    pub fn record(&self, hostname: &str) -> String {
        format!(
            "{hostname}. CAA 0 issue \"{}; accounturi={}; validationmethods={}\"",
            self.issuer, self.account, self.method
        )
    }
}

/// Why the CAA set does not do what the route needs, in words for the owner.
pub fn problem(records: &[CaaRecord], wanted: &Wanted<'_>) -> Option<String> {
    if records.is_empty() {
        return Some("it has no CAA record, so any CA may issue for it to anyone".into());
    }
    if let Some(unknown) = records.iter().find(|r| r.critical && !known_tag(&r.tag)) {
        return Some(format!(
            "its CAA set has a critical \"{}\" property that CAs must refuse to issue under",
            unknown.tag
        ));
    }
    let issue: Vec<&CaaRecord> = records.iter().filter(|r| r.tag.eq_ignore_ascii_case("issue")).collect();
    if issue.is_empty() {
        return Some("its CAA set has no \"issue\" property, so it restricts no CA".into());
    }
    for record in &issue {
        let Some(parsed) = IssueValue::parse(&record.value) else {
            return Some(format!("its CAA value \"{}\" cannot be read", record.value));
        };
        let Some(issuer) = parsed.issuer.as_deref() else {
            // `issue ";"` forbids every CA: the route cannot get a certificate.
            return Some("its CAA set forbids every CA (issue \";\")".into());
        };
        if !issuer.eq_ignore_ascii_case(wanted.issuer) {
            return Some(format!("its CAA set also allows {issuer}, not only {}", wanted.issuer));
        }
        match parsed.param("accounturi") {
            Some(account) if account == wanted.account => {}
            Some(other) => return Some(format!("its CAA set allows the account {other}, not this journal's")),
            None => return Some("its CAA set allows every account of the CA, not only this journal's".into()),
        }
        match parsed.param("validationmethods") {
            Some(methods) if methods.split(',').map(str::trim).all(|m| m == wanted.method) => {}
            Some(methods) => {
                return Some(format!(
                    "its CAA set allows the validation methods {methods}, not only {}",
                    wanted.method
                ));
            }
            None => return Some("its CAA set allows every validation method, not only the one this route uses".into()),
        }
    }
    None
}

fn known_tag(tag: &str) -> bool {
    ["issue", "issuewild", "iodef"]
        .iter()
        .any(|known| tag.eq_ignore_ascii_case(known))
}

/// An `issue` value: an optional issuer domain, then `;`-separated `key=value` parameters.
#[derive(Debug, PartialEq, Eq)]
struct IssueValue {
    issuer: Option<String>,
    params: Vec<(String, String)>,
}

impl IssueValue {
    fn parse(value: &str) -> Option<IssueValue> {
        let mut parts = value.split(';');
        let issuer = parts.next().unwrap_or("").trim();
        let issuer = (!issuer.is_empty()).then(|| issuer.trim_end_matches('.').to_string());
        let mut params = Vec::new();
        for part in parts {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let (key, value) = part.split_once('=')?;
            params.push((key.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
        Some(IssueValue { issuer, params })
    }

    fn param(&self, key: &str) -> Option<&str> {
        self.params.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACCOUNT: &str = "https://acme.example/acct/42";
    const WANTED: Wanted<'static> = Wanted {
        issuer: "letsencrypt.org",
        account: ACCOUNT,
        method: "tls-alpn-01",
    };

    fn issue(value: &str) -> CaaRecord {
        CaaRecord {
            critical: false,
            tag: "issue".into(),
            value: value.into(),
        }
    }

    fn exact() -> String {
        format!("letsencrypt.org; accounturi={ACCOUNT}; validationmethods=tls-alpn-01")
    }

    #[test]
    fn exactly_this_ca_account_and_method_pass() {
        assert_eq!(problem(&[issue(&exact())], &WANTED), None);
        // Spacing and case of the issuer, and a trailing dot, are the same domain.
        let spaced = format!("LetsEncrypt.org. ;accounturi={ACCOUNT} ;  validationmethods=tls-alpn-01");
        assert_eq!(problem(&[issue(&spaced)], &WANTED), None);
        // Other properties alongside are fine.
        let iodef = CaaRecord {
            critical: false,
            tag: "iodef".into(),
            value: "mailto:owner@example.org".into(),
        };
        assert_eq!(problem(&[issue(&exact()), iodef], &WANTED), None);
        assert_eq!(
            WANTED.record("journal.example.org"),
            format!("journal.example.org. CAA 0 issue \"{}\"", exact())
        );
    }

    #[test]
    fn anything_looser_or_different_is_a_problem() {
        let cases = [
            (vec![], "no CAA record"),
            (vec![issue("letsencrypt.org")], "every account"),
            (
                vec![issue(&format!("letsencrypt.org; accounturi={ACCOUNT}"))],
                "every validation method",
            ),
            (
                vec![issue(&format!(
                    "letsencrypt.org; accounturi={ACCOUNT}; validationmethods=http-01,tls-alpn-01"
                ))],
                "validation methods http-01,tls-alpn-01",
            ),
            (
                vec![issue(
                    "letsencrypt.org; accounturi=https://acme.example/acct/7; validationmethods=tls-alpn-01",
                )],
                "the account https://acme.example/acct/7",
            ),
            (vec![issue(&exact()), issue("sectigo.com")], "also allows sectigo.com"),
            (vec![issue(";")], "forbids every CA"),
            (
                vec![CaaRecord {
                    critical: false,
                    tag: "issuewild".into(),
                    value: exact(),
                }],
                "no \"issue\" property",
            ),
            (
                vec![
                    issue(&exact()),
                    CaaRecord {
                        critical: true,
                        tag: "future".into(),
                        value: "x".into(),
                    },
                ],
                "critical \"future\"",
            ),
            (vec![issue("letsencrypt.org; accounturi")], "cannot be read"),
        ];
        for (records, says) in cases {
            let found = problem(&records, &WANTED).unwrap_or_else(|| panic!("{records:?} passed"));
            assert!(found.contains(says), "{records:?}: {found}");
        }
    }
}
