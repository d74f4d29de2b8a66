//! `journal relay ...`: running a relay on a server of your own, for journals behind NAT
//! (`crate::relay`). `serve` runs it; `enrol NAME` prints a journal's one-time credential; `list` and
//! `revoke` show and end enrolments. None of these touches a journal: the relay keeps its own folder.

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::Context;
use clap::Subcommand;

use crate::clock::unix_now;
use crate::config;
use crate::relay::enrolments;
use crate::relay::identity;
use crate::relay::serve::{self, RelayLimits, RelayPlan};

#[derive(Debug, Subcommand)]
pub enum RelayCommand {
    /// Run the relay: agents' TLS connections for NAME.<hostname> go, still encrypted, to the
    /// journal enrolled as NAME.
    Serve(ServeArgs),
    /// Enrol a journal as NAME: prints its one-time credential for `journal route enable relay`.
    Enrol {
        /// The journal's name: it is reached at NAME.<the relay's hostname>.
        name: String,
        /// Give a name enrolled already a new credential (its journal's key is forgotten).
        #[arg(long)]
        again: bool,
        #[command(flatten)]
        data: DataArg,
    },
    /// List the enrolled journals.
    List {
        #[command(flatten)]
        data: DataArg,
    },
    /// End a journal's enrolment: it can no longer connect (a running relay cuts it within 30 s).
    Revoke {
        name: String,
        #[command(flatten)]
        data: DataArg,
    },
}

#[derive(Debug, clap::Args)]
pub struct DataArg {
    /// The relay's folder (its enrolments); default: journal-relay in your data folder.
    #[arg(long, value_name = "DIR", env = "JOURNAL_RELAY_HOME")]
    data: Option<PathBuf>,
}

impl DataArg {
    fn dir(&self) -> anyhow::Result<PathBuf> {
        match &self.data {
            Some(dir) => Ok(dir.clone()),
            None => Ok(config::data_dir()?.join("journal-relay")),
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The relay's own hostname; journals are reached at NAME.<hostname> (point *.<hostname> and
    /// <hostname> at this server).
    #[arg(long)]
    hostname: String,
    /// Where to listen.
    #[arg(long, value_name = "IP:PORT", default_value = "[::]:443")]
    listen: String,
    /// The relay's certificate chain for its own hostname, in PEM (leaf first).
    #[arg(long, value_name = "FILE")]
    cert: PathBuf,
    /// The key of that certificate, in PEM.
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
    #[command(flatten)]
    data: DataArg,
}

pub async fn run(command: RelayCommand) -> anyhow::Result<()> {
    match command {
        RelayCommand::Serve(args) => serve(args).await,
        RelayCommand::Enrol { name, again, data } => {
            let dir = data.dir()?;
            let credential = enrolments::enrol(&dir, &name, again, unix_now())?;
            let name = enrolments::name_of(&name)?;
            say!("{name} is enrolled. Give its owner this credential; it works once, and is not shown again:");
            say!("{credential}");
            say!("The journal connects with it as {name}.<this relay's hostname>, and from then on by its own key.");
            Ok(())
        }
        RelayCommand::List { data } => {
            let journals = enrolments::list(&data.dir()?)?;
            if journals.is_empty() {
                say!("no journal is enrolled: `journal relay enrol NAME` enrols one");
            }
            for journal in journals {
                let state = if journal.key.is_some() {
                    "connected before"
                } else {
                    "waiting for its first connection"
                };
                say!(
                    "{}  enrolled {}  {state}",
                    journal.name,
                    crate::journal::day::format_timestamp(journal.enrolled_at)
                );
            }
            Ok(())
        }
        RelayCommand::Revoke { name, data } => {
            enrolments::revoke(&data.dir()?, &name)?;
            say!(
                "{} can no longer connect; a running relay cuts its tunnel within 30 seconds.",
                name.trim()
            );
            Ok(())
        }
    }
}

async fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let mut signals = super::serve::Signals::install()?;
    let hostname = config::hostname_of(&args.hostname)?;
    let listen: SocketAddr = args
        .listen
        .trim()
        .parse()
        .map_err(|_| anyhow::anyhow!("listen address \"{}\" is not IP:PORT, like [::]:443", args.listen))?;
    let plan = RelayPlan {
        hostname: hostname.clone(),
        listen,
        dir: args.data.dir()?,
        chain: identity::certificates(&args.cert).context("the relay's certificate (--cert)")?,
        key: identity::private_key(&args.key).context("the relay's key (--key)")?,
        limits: RelayLimits::default(),
    };
    enrolments::list(&plan.dir).context("the relay's enrolments cannot be read")?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let running = serve::start(plan, stopped).await?;
    say!(
        "the relay serves journals at NAME.{hostname} on {}; enrol one with `journal relay enrol NAME`",
        running.addr
    );
    say!("press Ctrl-C to stop");
    signals.stop().await;
    say!("stopping");
    let _ = stop.send(true);
    running.task.await.context("the relay did not stop cleanly")?;
    Ok(())
}
