mod demo;

use std::io::IsTerminal;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};
use demo::DemoArgs;
use ordergate_rush::RushArgs;
use ordergate_server::{Settings, open_store, serve};
use tokio::net::TcpListener;
use tracing_subscriber::EnvFilter;

/// mimalloc: the server is allocation-heavy (JSON, HTTP, small strings)
/// across many threads, where glibc malloc showed up at ~13% of a profile.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Restaurant table ordering where every order reaches the kitchen exactly once.
#[derive(Parser)]
#[command(name = "ordergate", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,

    /// `text` for people, or `json`: one JSON object a line (time, level,
    /// message and the request's fields), for a log shipper.
    #[arg(long, global = true, value_enum, env = "ORDERGATE_LOG_FORMAT", default_value_t = LogFormat::Text)]
    log_format: LogFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Run the server.
    Serve(Settings),
    /// Run the server on a fresh demo database with a seeded diner.
    Demo(DemoArgs),
    /// Simulate a lunch peak with faults and check every invariant held.
    Rush(RushArgs),
    #[command(flatten)]
    Data(ordergate_migrate::DataCommand),
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    let logs = tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr);
    match cli.log_format {
        LogFormat::Text => logs.with_ansi(std::io::stderr().is_terminal()).init(),
        // The request's span fields ride on each line, beside the event's own.
        LogFormat::Json => logs
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_span_list(false)
            .init(),
    }
    let result = match cli.command {
        Command::Serve(settings) => run(settings).await,
        Command::Demo(args) => demo::run(args, shutdown_signal()).await,
        Command::Rush(args) => ordergate_rush::run(args).await,
        Command::Data(command) => command.run().await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(settings: Settings) -> anyhow::Result<()> {
    // Before the database is opened (and migrated): a refused start changes nothing.
    settings.check()?;
    let store = open_store(&settings).await?;
    let listener = TcpListener::bind(settings.listen).await.with_context(|| {
        format!(
            "cannot listen on {}: another program has that port, or it is not this \
             machine's address (give another with --listen)",
            settings.listen
        )
    })?;
    serve(settings, store, listener, shutdown_signal()).await
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM (what service managers send).
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    // Registered now, not when the future is first polled: a SIGTERM that
    // arrives just after "listening on" is printed must stop the server
    // gracefully, not kill it by the default action.
    let terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate());
    async move {
        let interrupt = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        let terminate = async {
            match terminate {
                Ok(mut signal) => {
                    signal.recv().await;
                }
                Err(_) => std::future::pending().await,
            }
        };
        tokio::select! {
            () = interrupt => {}
            () = terminate => {}
        }
        tracing::info!("shutting down: finishing in-flight requests");
    }
}
