//! The builder's command line (`toolhost init`, `dev`, `deploy`, `pull`, `revisions`,
//! `rollback`, `login`, `logs`, `endpoints`, `secrets`, `revenue`, `call`, and for anyone
//! `receipt verify` and `log monitor`; docs/cli.md): a client of the public HTTP API, nothing more.
//! It reaches a server only over HTTP, as any other client would, so what it prints is what the
//! API answered and it can never do what the API would refuse. `dev` runs the server itself
//! (`server::Server`, on a throwaway data dir) and talks to it over the same API, so a handler
//! runs locally in the very sandbox and pipeline it runs in production.
//!
//! Exit codes, for scripts: 0 done; 1 a local failure (a file that cannot be written); 2 a usage
//! error (bad arguments, no builder key, a bad project or manifest); 3 the server refused (its
//! error code and message are printed); 4 the server could not be reached or did not answer
//! as a toolhost server does; 5 a check did not hold (a receipt that does not verify, a receipt
//! log that forked).

mod api;
mod backup;
mod call;
mod deployed;
mod dev;
mod manage;
mod money;
mod output;
mod profile;
mod project;
mod receipts;
mod revisions;

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::Value;

/// Where a client command goes when neither a flag, the environment nor `toolhost login` says:
/// the address `toolhost serve` listens on by default.
const DEFAULT_SERVER: &str = "http://127.0.0.1:8402";

/// The client commands, flattened into the binary's own subcommands beside `serve`.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Start a tool in DIR: handler.js (or handler.ts), the manifest toolhost.json, and
    /// toolhost.d.ts for editors. Refuses a non-empty DIR.
    Init(InitArgs),
    /// Serve the tool in DIR at http://127.0.0.1:PORT/tools/<slug>, without payment, in the
    /// same sandbox as production; reloads on save and prints each call.
    Dev(DevArgs),
    /// Create the tool in DIR on the server, or update it to a new revision. Refused when the
    /// endpoint changed since DIR last deployed or pulled (the dashboard, another checkout, a
    /// rollback), unless --force.
    Deploy(DeployArgs),
    /// Write the newest revision of a tool (the serving one, or the one waiting for a grant or
    /// rolling out) into DIR: manifest, handler, files.
    Pull(PullArgs),
    /// An endpoint's kept revisions, newest first, with what serves and what waits for a grant.
    Revisions(RevisionsArgs),
    /// Serve a kept revision of an endpoint again.
    Rollback(RollbackArgs),
    /// A gradual rollout: show both revisions' calls side by side (the default), roll a kept
    /// revision out to a share of payers or change the share (--share), promote or end it.
    Rollout(RolloutArgs),
    /// Check a builder key against a server and store both for later commands.
    Login(LoginArgs),
    /// An endpoint's invocation logs, newest last.
    Logs(LogsArgs),
    /// Your endpoints: list (the default), pause, resume, delete.
    Endpoints(EndpointsArgs),
    /// An endpoint's secrets (seen by the handler in ctx.env, never shown back).
    Secrets(SecretsArgs),
    /// Your revenue: gross, fee and net, by endpoint.
    Revenue(RevenueArgs),
    /// Your event feed, newest first: deploys, grants, calls, payments, payouts.
    Events(EventsArgs),
    /// Your payouts: the balance and packets (list, the default), where payouts go (settings),
    /// a packet of the collected balance (create).
    Payouts(PayoutsArgs),
    /// Call an endpoint as an agent would, paying a paid one with --credit or --wallet-key (it
    /// says the price first); or with --test make a test call of your own endpoint for free.
    Call(CallArgs),
    /// Receipts: `verify` checks a call's answer offline against the receipt log's key;
    /// `refund` gives back what one charged.
    Receipt(ReceiptArgs),
    /// The receipt log: `monitor` watches its checkpoints and exits 5 on a fork or a rewrite.
    Log(LogArgs),
    /// Save a backup of a server's embedded store and key files (the admin's): taken while it
    /// serves, checked whole before it is kept; `toolhost restore` makes a data dir of it.
    Backup(BackupArgs),
}

/// The server, the credential and the output format of the commands that talk to a server.
#[derive(clap::Args, Clone, Default)]
pub struct Global {
    /// Server base URL. Default: the one stored by `toolhost login`, else http://127.0.0.1:8402.
    #[arg(long, env = "TOOLHOST_URL", global = true)]
    server: Option<String>,
    /// Builder key (thb_...). Default: the one `toolhost login` stored for that same server.
    #[arg(
        long,
        env = "TOOLHOST_BUILDER_KEY",
        hide_env_values = true,
        global = true
    )]
    builder_key: Option<String>,
    #[command(flatten)]
    output: OutputArgs,
}

/// The output format, accepted by every client command.
#[derive(clap::Args, Clone, Default)]
pub struct OutputArgs {
    /// Print JSON instead of tables: the server's answers, one document per line (for scripts).
    #[arg(long, global = true)]
    json: bool,
}

#[derive(clap::Args)]
pub struct InitArgs {
    /// Directory to create the tool in (created when missing; must be empty).
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Write the handler in TypeScript (handler.ts) instead of JavaScript.
    #[arg(long)]
    ts: bool,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(clap::Args)]
pub struct DevArgs {
    /// The tool's directory (holding toolhost.json).
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Port on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 8787)]
    port: u16,
    /// DEV ONLY: let the handler's httpGetJson and fetch reach loopback and private networks
    /// (a local upstream, a service on the LAN). Cloud metadata (link-local) stays refused, and
    /// a deployed tool never gets this.
    #[arg(long, env = "TOOLHOST_DEV_ALLOW_PRIVATE_UPSTREAMS")]
    allow_private_upstreams: bool,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(clap::Args)]
pub struct DeployArgs {
    /// The tool's directory (holding toolhost.json).
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Deploy even when the endpoint changed since this directory last deployed or pulled.
    #[arg(long)]
    force: bool,
    /// Roll the new revision out to this percentage of payers (1-100) beside the serving one,
    /// instead of serving it whole; then `toolhost rollout` compares, promotes or ends it.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=100))]
    share: Option<u8>,
    #[command(flatten)]
    global: Global,
}

#[derive(clap::Args)]
pub struct PullArgs {
    /// The directory to write the tool into (created when missing).
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// The endpoint to pull. Default: the slug in DIR's toolhost.json.
    #[arg(long)]
    slug: Option<String>,
    /// Overwrite local changes that were never deployed.
    #[arg(long)]
    force: bool,
    #[command(flatten)]
    global: Global,
}

#[derive(clap::Args)]
pub struct RevisionsArgs {
    /// The endpoint's slug.
    slug: String,
    #[command(flatten)]
    global: Global,
}

#[derive(clap::Args)]
pub struct RollbackArgs {
    /// The endpoint's slug.
    slug: String,
    /// The kept revision to serve (see `toolhost revisions`).
    revision: u64,
    #[command(flatten)]
    global: Global,
}

#[derive(clap::Args)]
pub struct RolloutArgs {
    /// The endpoint's slug.
    slug: String,
    /// Roll out to this percentage of payers (1-100), or change the running rollout's share.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=100), conflicts_with_all = ["promote", "end"])]
    share: Option<u8>,
    /// The kept revision to roll out (with --share). Default: the one rolling out now.
    #[arg(long, requires = "share")]
    revision: Option<u64>,
    /// The rolling-out revision serves every call.
    #[arg(long, conflicts_with = "end")]
    promote: bool,
    /// End the rollout: the serving revision serves every call again.
    #[arg(long)]
    end: bool,
    #[command(flatten)]
    global: Global,
}

#[derive(clap::Args)]
pub struct LoginArgs {
    #[command(flatten)]
    global: Global,
}

#[derive(clap::Args)]
pub struct LogsArgs {
    /// The endpoint's slug.
    slug: String,
    /// Keep printing new calls as they come (Ctrl-C to stop).
    #[arg(long, short)]
    follow: bool,
    /// How many of the latest calls to print first (1 to 200).
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u16).range(1..=200))]
    limit: u16,
    #[command(flatten)]
    global: Global,
}

#[derive(clap::Args)]
pub struct EndpointsArgs {
    #[command(subcommand)]
    action: Option<EndpointsAction>,
    #[command(flatten)]
    global: Global,
}

#[derive(clap::Subcommand)]
pub enum EndpointsAction {
    /// Your endpoints with status, price, revision and URL.
    List,
    /// Pause an endpoint: calls answer 503 endpoint_paused until it is resumed.
    Pause { slug: String },
    /// Resume a paused endpoint.
    Resume { slug: String },
    /// Delete an endpoint with its secrets, files, kv data and logs.
    Delete {
        slug: String,
        /// Do not ask for confirmation (needed when stdin is not a terminal).
        #[arg(long)]
        yes: bool,
    },
}

#[derive(clap::Args)]
pub struct SecretsArgs {
    #[command(subcommand)]
    action: SecretsAction,
    #[command(flatten)]
    global: Global,
}

#[derive(clap::Subcommand)]
pub enum SecretsAction {
    /// The names of an endpoint's secrets.
    List { slug: String },
    /// Set a secret; without VALUE it is read from stdin (so it stays out of shell history).
    Set {
        slug: String,
        name: String,
        value: Option<String>,
    },
    /// Delete secrets by name.
    Delete {
        slug: String,
        #[arg(required = true)]
        names: Vec<String>,
    },
}

#[derive(clap::Args)]
pub struct RevenueArgs {
    /// The window: a whole number and s, m, h, d or w.
    #[arg(long, default_value = "30d")]
    since: String,
    #[command(flatten)]
    global: Global,
}

#[derive(clap::Args)]
pub struct EventsArgs {
    /// The window: a whole number and s, m, h, d or w.
    #[arg(long, default_value = "7d")]
    since: String,
    /// Only this endpoint's events.
    #[arg(long)]
    slug: Option<String>,
    /// How many (1 to 200).
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u16).range(1..=200))]
    limit: u16,
    #[command(flatten)]
    global: Global,
}

#[derive(clap::Args)]
pub struct PayoutsArgs {
    #[command(subcommand)]
    action: Option<PayoutsAction>,
    #[command(flatten)]
    global: Global,
}

#[derive(clap::Subcommand)]
pub enum PayoutsAction {
    /// The collected and uncollected balances and the packets so far.
    List,
    /// Where payouts go: shown without options; set with --pay-to and --network.
    Settings {
        /// The EVM address to pay, in its EIP-55 (checksummed) form.
        #[arg(long, requires = "network")]
        pay_to: Option<String>,
        /// The network, as CAIP-2 (e.g. eip155:84532).
        #[arg(long, requires = "pay_to")]
        network: Option<String>,
        /// The asset's address (default: the network's settlement asset).
        #[arg(long)]
        asset: Option<String>,
        /// The least collected balance a packet is made for, in USD.
        #[arg(long, default_value_t = 10.0)]
        minimum_usd: f64,
    },
    /// A packet of the whole collected, unpaid balance, for the admin to pay.
    Create,
}

#[derive(clap::Args)]
pub struct CallArgs {
    /// The endpoint's slug.
    slug: String,
    /// The input, a JSON object.
    #[arg(long, default_value = "{}")]
    input: String,
    /// A test call of your own endpoint: sends your builder key and X-Toolhost-Test: 1, so the
    /// server runs it without payment.
    #[arg(long)]
    test: bool,
    /// A test call of this kept revision (one waiting for a grant, say) instead of the serving
    /// one; implies --test.
    #[arg(long)]
    revision: Option<u64>,
    /// Pay a paid endpoint with this developer credit token (X-Developer-Credit).
    #[arg(long, env = "TOOLHOST_DEVELOPER_CREDIT", hide_env_values = true)]
    credit: Option<String>,
    /// Pay a paid endpoint from this wallet: a file holding its private key (hex). Signs an
    /// x402 `exact` payment for the first network the endpoint accepts.
    #[arg(long, value_name = "FILE")]
    wallet_key: Option<PathBuf>,
    #[command(flatten)]
    global: Global,
}

#[derive(clap::Args)]
pub struct BackupArgs {
    /// Where to save it (refused if it exists; written owner-only).
    #[arg(long)]
    out: PathBuf,
    /// The server's admin token.
    #[arg(long, env = "TOOLHOST_ADMIN_TOKEN", hide_env_values = true)]
    admin_token: String,
    #[command(flatten)]
    global: Global,
}

#[derive(clap::Args)]
pub struct ReceiptArgs {
    #[command(subcommand)]
    action: ReceiptAction,
    #[command(flatten)]
    global: Global,
}

#[derive(clap::Subcommand)]
pub enum ReceiptAction {
    /// Check a call's answer offline: its checkpoint is signed by the log's key, its receipt is
    /// in the tree the checkpoint commits to, and the receipt's own signature holds.
    Verify {
        /// A file holding the answer: a `/tools/{slug}` or `/ai/invoke` answer, an MCP tool
        /// result (its `_meta`), or `{"receipt": …, "receiptLog": …}`; `-` reads stdin.
        file: PathBuf,
        /// The log's verifier key (`receipts.log.verifierKey` in /ai/manifest). Without it the
        /// key is fetched from the server, which proves less: what that server says now.
        #[arg(long)]
        key: Option<String>,
    },
    /// Refund a paid call of one of your endpoints, wholly or in part (once per receipt): a
    /// developer credit gets its money back; revenue and payouts count what is left.
    Refund {
        /// The receipt id (rcpt_...).
        receipt_id: String,
        /// Why (1 to 500 characters); kept in the signed refund record.
        #[arg(long)]
        reason: String,
        /// How much, in USD, at most the charge. Default: the whole charge.
        #[arg(long, value_name = "USD")]
        amount_usd: Option<String>,
        /// Refund as the admin instead of as the endpoint's owner (beyond a paid-out balance,
        /// or a platform sale).
        #[arg(long, env = "TOOLHOST_ADMIN_TOKEN", hide_env_values = true)]
        admin_token: Option<String>,
    },
}

#[derive(clap::Args)]
pub struct LogArgs {
    #[command(subcommand)]
    action: LogAction,
    #[command(flatten)]
    global: Global,
}

#[derive(clap::Subcommand)]
pub enum LogAction {
    /// Watch the server's receipt log: fetch its signed checkpoint now and then, check that
    /// each extends the last one seen (a consistency proof), keep what was seen in a state
    /// file, and exit 5 with both signed checkpoints on a fork or a rewritten history.
    Monitor {
        /// What was seen (the pinned key and the last checkpoint), kept between runs.
        #[arg(long, default_value = "toolhost-log-monitor.json")]
        state: PathBuf,
        /// Seconds between checks.
        #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
        interval: u64,
        /// Check once and exit (for cron and CI).
        #[arg(long)]
        once: bool,
    },
}

/// Why a command failed, and so its exit code.
#[derive(Debug)]
enum Failure {
    /// Something here could not be done (a file could not be written): exit 1.
    Local(String),
    /// The command was asked for something it cannot do as asked: exit 2.
    Usage(String),
    /// The server answered with an error: exit 3.
    Refused {
        status: u16,
        code: String,
        message: String,
        body: Value,
    },
    /// No answer, or not one a toolhost server gives: exit 4.
    Network(String),
    /// A check did not hold (a receipt, a log's consistency): exit 5.
    Check(String),
}

impl Failure {
    fn exit_code(&self) -> u8 {
        match self {
            Failure::Local(_) => 1,
            Failure::Usage(_) => 2,
            Failure::Refused { .. } => 3,
            Failure::Network(_) => 4,
            Failure::Check(_) => 5,
        }
    }
}

type Outcome = Result<(), Failure>;

impl Command {
    fn output(&self) -> &OutputArgs {
        match self {
            Command::Init(a) => &a.output,
            Command::Dev(a) => &a.output,
            Command::Deploy(a) => &a.global.output,
            Command::Pull(a) => &a.global.output,
            Command::Revisions(a) => &a.global.output,
            Command::Rollback(a) => &a.global.output,
            Command::Rollout(a) => &a.global.output,
            Command::Login(a) => &a.global.output,
            Command::Logs(a) => &a.global.output,
            Command::Endpoints(a) => &a.global.output,
            Command::Secrets(a) => &a.global.output,
            Command::Revenue(a) => &a.global.output,
            Command::Events(a) => &a.global.output,
            Command::Payouts(a) => &a.global.output,
            Command::Call(a) => &a.global.output,
            Command::Receipt(a) => &a.global.output,
            Command::Log(a) => &a.global.output,
            Command::Backup(a) => &a.global.output,
        }
    }
}

/// Runs one client command and turns its outcome into the exit code.
pub async fn run(command: Command) -> ExitCode {
    let out = output::Out::new(command.output().json);
    let outcome = match command {
        Command::Init(args) => project::init(&args.dir, args.ts, &out),
        Command::Dev(args) => {
            dev::run(&args.dir, args.port, args.allow_private_upstreams, &out).await
        }
        Command::Deploy(args) => manage::deploy(&args, &out).await,
        Command::Pull(args) => revisions::pull(&args, &out).await,
        Command::Revisions(args) => revisions::list(&args.slug, &args.global, &out).await,
        Command::Rollback(args) => revisions::rollback(&args, &out).await,
        Command::Rollout(args) => revisions::rollout(&args, &out).await,
        Command::Login(args) => manage::login(&args.global, &out).await,
        Command::Logs(args) => manage::logs(&args, &out).await,
        Command::Endpoints(args) => manage::endpoints(&args, &out).await,
        Command::Secrets(args) => manage::secrets(&args, &out).await,
        Command::Revenue(args) => manage::revenue(&args, &out).await,
        Command::Events(args) => money::events(&args, &out).await,
        Command::Payouts(args) => money::payouts(&args, &out).await,
        Command::Call(args) => call::call(&args, &out).await,
        Command::Receipt(args) => receipts::receipt(&args, &out).await,
        Command::Log(args) => receipts::log(&args, &out).await,
        Command::Backup(args) => backup::backup(&args, &out).await,
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            out.failure(&failure);
            ExitCode::from(failure.exit_code())
        }
    }
}
