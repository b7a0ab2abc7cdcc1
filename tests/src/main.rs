//! The `ledger-node` command line: `serve` runs the node on SQLite (or memory) through
//! the WebAssembly component.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use ledger_node::backend::Backend;
use ledger_node::host::{self, Node, Options};
use ledger_node::{config, server};

/// A Canton-style ledger network node's public API.
#[derive(Debug, Parser)]
#[command(name = "ledger-node", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serves the API over HTTP, configured by the LEDGER_NODE_* environment variables.
    Serve {
        /// Address to listen on.
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: SocketAddr,
        /// SQLite database file (created if absent).
        #[arg(long, conflicts_with = "memory", required_unless_present = "memory")]
        db: Option<PathBuf>,
        /// Keep the state in memory only (lost on exit).
        #[arg(long)]
        memory: bool,
    },
}

fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve { listen, db, memory } => serve(listen, db, memory),
    }
}

fn serve(listen: SocketAddr, db: Option<PathBuf>, memory: bool) -> anyhow::Result<()> {
    let vars = config::from_environment()?;
    let backend = match (&db, memory) {
        (Some(path), _) => {
            Backend::sqlite(path).map_err(|e| anyhow::anyhow!("opening {}: {e}", path.display()))?
        }
        (None, _) => Backend::memory(),
    };
    let engine = host::engine()?;
    let node = Arc::new(Node::new(
        &engine,
        backend,
        Options {
            config: vars,
            fixed_clock: None,
        },
    )?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let (listener, local) = server::bind(listen).await?;
        eprintln!("ledger-node: serving on http://{local}");
        let shutdown = async {
            let _ = tokio::signal::ctrl_c().await;
            eprintln!("ledger-node: shutting down");
        };
        server::serve(listener, node, shutdown).await
    })
}
