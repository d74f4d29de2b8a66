//! `journal app`: a one-time link that signs a browser in to the owner app; `journal app signout`,
//! which ends every owner session; and `journal app passphrase set|clear`, the optional passphrase
//! asked for in addition to the link.

use std::path::Path;
use std::time::Duration;

use clap::{Args, Subcommand};

use super::open_for_access;
use crate::auth::{owner, passphrase};
use crate::clock::unix_now;
use crate::config;
use crate::fsio;

#[derive(Debug, Args)]
pub struct AppArgs {
    #[command(subcommand)]
    pub command: Option<AppCommand>,
    /// Print the link without opening a browser.
    #[arg(long)]
    pub no_open: bool,
    /// The local route's address, when `journal serve` was given another one.
    #[arg(long, value_name = "ADDR", env = "JOURNAL_LOCAL_ADDR")]
    pub local_addr: Option<String>,
}

#[derive(Debug, Subcommand)]
pub enum AppCommand {
    /// Sign every browser out of the owner app, and void unused links.
    Signout,
    /// The owner passphrase, asked for in addition to the link.
    #[command(subcommand)]
    Passphrase(PassphraseCommand),
}

#[derive(Debug, Subcommand)]
pub enum PassphraseCommand {
    /// Set or replace it (typed twice at a terminal, or one line on standard input); signs every browser out.
    Set,
    /// Remove it: the link alone signs in again.
    Clear,
}

pub async fn run(dir: &Path, args: AppArgs) -> anyhow::Result<()> {
    let journal = open_for_access(dir).await?;
    match args.command {
        Some(AppCommand::Signout) => {
            let ended = owner::end_all(&journal.db).await?;
            say!("signed out of the owner app: {ended} session{} ended", plural(ended));
            return Ok(());
        }
        Some(AppCommand::Passphrase(PassphraseCommand::Set)) => {
            let typed = read_new_passphrase()?;
            passphrase::check_rules(&typed).map_err(|reason| anyhow::anyhow!("{reason}"))?;
            let hash = tokio::task::spawn_blocking(move || passphrase::hash(&typed)).await??;
            let ended = passphrase::set(&journal.db, &hash, unix_now()).await?;
            say!(
                "the owner app now asks for this passphrase after the link; {ended} session{} signed out",
                plural(ended)
            );
            return Ok(());
        }
        Some(AppCommand::Passphrase(PassphraseCommand::Clear)) => {
            if passphrase::clear(&journal.db).await? {
                say!("the passphrase is removed: a link from `journal app` alone signs in");
            } else {
                say!("no passphrase was set");
            }
            return Ok(());
        }
        None => {}
    }
    let settings = config::read_file(dir)?;
    let addr = config::local_addr(args.local_addr.as_deref(), &settings)?;
    let token = owner::create_link(&journal.db, unix_now()).await?;
    let link = format!("http://{addr}/app/signin?t={token}");
    let serving = tokio::time::timeout(Duration::from_secs(1), tokio::net::TcpStream::connect(addr))
        .await
        .is_ok_and(|connected| connected.is_ok());
    if !serving {
        eprintln!(
            "note: nothing is serving at {addr} yet: start it with `journal serve` (the link works for {} minutes)",
            owner::LINK_LIFETIME_SECONDS / 60
        );
    }
    let then = if passphrase::stored(&journal.db).await?.is_some() {
        "; it then asks for your owner passphrase"
    } else {
        ""
    };
    say!(
        "Open this link to sign in to the owner app (it works once, for {} minutes{then}):",
        owner::LINK_LIFETIME_SECONDS / 60
    );
    say!("{link}");
    if !args.no_open && serving {
        open_browser(dir, &link);
    }
    Ok(())
}

/// The page that hands the link to the browser: the link never goes on a command line, where every
/// local user reads it in `ps`; the opener gets this file's path, and the file (0600, in the
/// journal's folder, replaced by the next `journal app`) redirects the browser to the link.
const OPENER_PAGE: &str = ".app-signin.html";

/// Opens the link in the default browser when this is a desktop session; silently does nothing
/// otherwise (a server over SSH, CI), since the link is printed anyway.
fn open_browser(dir: &Path, link: &str) {
    use std::io::IsTerminal;
    use std::process::Stdio;
    if !std::io::stdout().is_terminal() {
        return;
    }
    let desktop = cfg!(any(target_os = "macos", windows))
        || ["DISPLAY", "WAYLAND_DISPLAY"]
            .iter()
            .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()));
    if !desktop {
        return;
    }
    let page = dir.join(OPENER_PAGE);
    if fsio::write_atomic(&page, opener_page(link).as_bytes()).is_err() {
        return;
    }
    let _ = opener(&page)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
}

/// The system's opener for a local file.
fn opener(page: &Path) -> std::process::Command {
    use std::process::Command;
    let mut command = if cfg!(target_os = "macos") {
        Command::new("open")
    } else if cfg!(windows) {
        let mut command = Command::new("cmd");
        command.args(["/C", "start", ""]);
        command
    } else {
        Command::new("xdg-open")
    };
    command.arg(page);
    command
}

/// A page that sends the browser on to `link` at once.
fn opener_page(link: &str) -> String {
    // The link is made here of an address and a base64url token, so it holds nothing to escape; it
    // is escaped anyway, as any text put in an attribute.
    let link = link.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;");
    format!(
        "<!doctype html><meta charset=\"utf-8\"><meta name=\"referrer\" content=\"no-referrer\">\
         <meta http-equiv=\"refresh\" content=\"0;url={link}\"><title>journal</title>\
         <p><a href=\"{link}\">Sign in to the owner app</a></p>\n"
    )
}

fn plural(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Reads the new passphrase: typed twice without echo at a terminal, or one line from standard
/// input otherwise (a script, a password manager's pipe).
fn read_new_passphrase() -> anyhow::Result<String> {
    use std::io::{BufRead, IsTerminal};
    if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password("New owner passphrase: ")?;
        let second = rpassword::prompt_password("The same again: ")?;
        if first != second {
            anyhow::bail!("the two passphrases differ: nothing was changed, run the command again");
        }
        return Ok(first);
    }
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    let line = line.strip_suffix('\n').unwrap_or(&line);
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.is_empty() {
        anyhow::bail!("no passphrase was given: type it when asked, or send it as one line on standard input");
    }
    Ok(line.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_link_goes_to_the_browser_in_a_private_file_never_on_a_command_line() {
        let dir = tempfile::tempdir().unwrap();
        let link = "http://127.0.0.1:7659/app/signin?t=SECRETtoken_123";
        let page = dir.path().join(OPENER_PAGE);
        fsio::write_atomic(&page, opener_page(link).as_bytes()).unwrap();
        let command = opener(&page);
        let argv: Vec<String> = std::iter::once(command.get_program())
            .chain(command.get_args())
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(argv.iter().all(|a| !a.contains("SECRETtoken_123")), "{argv:?}");
        assert!(argv.iter().any(|a| a.ends_with(OPENER_PAGE)), "{argv:?}");
        let text = std::fs::read_to_string(&page).unwrap();
        assert!(
            text.contains("content=\"0;url=http://127.0.0.1:7659/app/signin?t=SECRETtoken_123\""),
            "{text}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&page).unwrap().permissions().mode() & 0o777, 0o600);
        }
        assert!(opener_page("http://x/?a=1&b=\"<").contains("a=1&amp;b=&quot;&lt;"));
    }
}
