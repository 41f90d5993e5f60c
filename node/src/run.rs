//! `hco node run`: opens the ledger, starts the network, the verification batcher, the window
//! driver, the HTTP gateway and (when configured) the metrics listener, and stops them all on
//! SIGINT/SIGTERM or when a critical task ends.

use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use hco_challenges::Registry;
use hco_oracle::admission_game::{AdmissionGame, GameParams, Share, WindowSets};
use hco_oracle::{Clock, Ledger, NodeId, Oracle, SystemClock};
use serde_json::json;

use crate::config::Config;
use crate::corpus::operator::AgentCorpus;
use crate::corpus::schedule::SetsWatch;
use crate::driver::{self, DriverOptions};
use crate::http::{self, AppState, Shared};
use crate::idle;
use crate::keyfile::{self, KeyKind};
use crate::metrics::Metrics;
use crate::network::{self, NetworkEvent};
use crate::priority::PeerRuntime;
use crate::service::{self, Node};

/// Runs a node until it is told to stop.
pub async fn run(config: Config) -> anyhow::Result<()> {
    let key = if config.node.key_file.exists() {
        keyfile::read(&config.node.key_file, KeyKind::NodeKey)?
    } else {
        tracing::info!(path = %config.node.key_file.display(), "no node key yet; generating one");
        keyfile::generate(&config.node.key_file, KeyKind::NodeKey, false)?
    };
    let me = NodeId(key.verifying_key().to_bytes());
    let mut params = config.network.params(me)?;
    // The agent class's corpus: the per-window family and the admission game both draw from it,
    // and the network parameters commit to it.
    let agent_corpus = Arc::new(AgentCorpus::load(&config)?);
    params.narrative = agent_corpus.narrative_params();
    let mut registry = Registry::builtin();
    registry.insert(agent_corpus.family());
    params.validate(&registry)?;
    std::fs::create_dir_all(&config.node.data_dir).with_context(|| {
        format!(
            "cannot create data directory {}",
            config.node.data_dir.display()
        )
    })?;
    let ledger =
        Ledger::open(&config.node.data_dir, params.ledger_digest()).with_context(|| {
            format!(
                "cannot open the ledger in {}",
                config.node.data_dir.display()
            )
        })?;
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let sets = Arc::new(SetsWatch::new(
        agent_corpus.schedule.clone(),
        agent_corpus.in_use,
        config.agent.warn_corpus_remaining,
        params.window_ms,
    ));
    let t = params.window_at(clock.now()).unwrap_or(0);
    sets.check(&ledger, t)?;
    sets.record(&ledger, t)?;
    sets.log(t);
    let oracle = Arc::new(Oracle::new(params.clone(), registry, key.clone(), ledger)?);
    // Windows that closed before now were decided without this node: it catches up on them.
    oracle.set_started_at(clock.now());

    let mut prometheus = prometheus_client::registry::Registry::default();
    let metrics = Arc::new(Metrics::new(&mut prometheus));
    let connection_metrics = http::conns::ConnMetrics::new(&mut prometheus);
    let prometheus = Arc::new(prometheus);
    // The committee's work runs on its own runtime, ahead of the clients' (see `priority`);
    // the swarm's sockets are made inside it so that its I/O driver polls them.
    let peers = PeerRuntime::start()?;
    let entered = peers.handle().enter();
    let (net, mut events, event_loop) = network::new(
        network::keypair(&key)?,
        &config.p2p,
        params.digest().to_hex(),
        params
            .committee
            .iter()
            .filter_map(network::peer_id)
            .collect(),
        metrics.clone(),
    )?;
    drop(entered);
    let node = Node::start(oracle, net, metrics, clock);
    node.withheld.set(config.agent.withhold_verdicts);
    if !config.agent.withhold_verdicts && !config.network.development && config.agent.enabled {
        tracing::warn!(
            "agent.withhold_verdicts is off outside a development network: a script holding many \
             agent identities learns a window's narrative answers from the verdicts (docs/operator.md)"
        );
    }
    let supervisor = node.supervisor.clone();
    let shutdown = supervisor.shutdown();
    #[cfg(feature = "unsafe-byzantine")]
    crate::byzantine::start(&node, &key, shutdown.clone());

    let listener = tokio::net::TcpListener::bind(config.http.listen)
        .await
        .with_context(|| {
            format!(
                "cannot listen on {} (address in use?); choose another http.listen",
                config.http.listen
            )
        })?;
    let http_url = format!("http://{}", listener.local_addr()?);
    // Metrics have their own listener, never the gateway's (see `metrics_listener`).
    let scrape = match config.metrics.listen {
        Some(addr) => Some(crate::metrics_listener::bind(addr).await?),
        None => None,
    };
    let metrics_url = match &scrape {
        Some(l) => Some(format!("http://{}", l.local_addr()?)),
        None => None,
    };

    // The swarm reports its listen addresses first; wait for them to announce the node.
    supervisor.spawn_critical_on(peers.handle(), "network", event_loop.run(shutdown.clone()));
    let mut p2p = Vec::new();
    while let Ok(Some(NetworkEvent::Listening(addr))) =
        tokio::time::timeout(std::time::Duration::from_millis(500), events.recv()).await
    {
        p2p.push(addr.to_string());
        if p2p.len() >= config.p2p.listen.len() {
            break;
        }
    }
    announce(
        &config.node.data_dir,
        &me,
        &http_url,
        metrics_url.as_deref(),
        &p2p,
        &params.digest().to_hex(),
    )?;
    tracing::info!(node = %me, http = %http_url, metrics = metrics_url.as_deref().unwrap_or("off"), window_ms = params.window_ms, committee = params.committee.len(), "node started");

    // A critical task that ends stops the node rather than leaving it limping.
    supervisor.spawn_critical_on(
        peers.handle(),
        "event pump",
        service::run_events(node.clone(), events),
    );
    let options = DriverOptions {
        retention_windows: config.ledger.retention_windows,
        catch_up_windows: config.ledger.catch_up_windows,
    };
    // Summaries, reveals and certificates are the committee's work too.
    supervisor.spawn_critical_on(
        peers.handle(),
        "window driver",
        driver::run(node.clone(), options, shutdown.clone()),
    );
    // Acceptances whose verdict was withheld, gossiped as their window closes.
    supervisor.spawn_critical_on(
        peers.handle(),
        "withheld acceptances",
        service::withheld::run(node.clone(), shutdown.clone()),
    );
    supervisor.spawn_critical_on(
        peers.handle(),
        "beat witnesses",
        crate::witness::run(node.clone(), shutdown.clone()),
    );
    supervisor.spawn_critical(
        "narrative sets",
        crate::corpus::schedule::run(node.clone(), sets, shutdown.clone()),
    );
    supervisor.spawn_critical(
        "identity pruning",
        idle::run(
            node.clone(),
            config.ledger.idle_identity_windows,
            shutdown.clone(),
        ),
    );
    let signals = shutdown.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("shutting down");
        signals.cancel();
    });

    let game = if config.agent.enabled {
        let game = admission_game(&config, &key, &agent_corpus, &params);
        warn_if_the_share_serves_no_session(&game, &params, node.now());
        Some(Arc::new(game))
    } else {
        None
    };
    let state = AppState::new(Shared {
        node,
        game,
        streams: Default::default(),
        limits: Arc::new(http::limits::Limits::new(&config.http.limits)),
        agent_corpus,
    });
    let app = http::router(
        state,
        config.http.max_body_bytes,
        config.http.request_timeout,
        config.http.admin,
    );
    if let Some(scrape) = scrape {
        supervisor.spawn_critical(
            "metrics listener",
            crate::metrics_listener::serve(scrape, prometheus, shutdown.clone()),
        );
    }
    http::serve(
        listener,
        app,
        &config.http,
        connection_metrics,
        shutdown.clone(),
    )
    .await?;
    shutdown.cancel();
    match supervisor.cause() {
        Some(cause) => anyhow::bail!("the node stopped after a failure: {cause}"),
        None => Ok(()),
    }
}

fn admission_game(
    config: &Config,
    key: &ed25519_dalek::SigningKey,
    corpus: &AgentCorpus,
    network: &hco_oracle::NetworkParams,
) -> AdmissionGame {
    let a = &config.agent;
    let params = GameParams {
        round_budget_ms: a.round_budget.as_millis() as u64,
        session_timeout_ms: a.session_timeout.as_millis() as u64,
        max_sessions: a.max_sessions,
        max_sessions_per_client: a.max_sessions_per_ip,
        max_sessions_per_identity: a.max_sessions_per_identity,
        credential_ttl_ms: a.credential_ttl.as_millis() as u64,
    };
    let share = game_share(network, &hco_oracle::NodeId(key.verifying_key().to_bytes()));
    AdmissionGame::new(
        params,
        key.clone(),
        (*corpus.corpus).clone(),
        WindowSets {
            schedule: corpus.schedule.clone(),
            genesis_ms: network.genesis_ms,
            window_ms: network.window_ms,
            share,
        },
    )
}

/// Says at start when this member's share of the current window's game questions makes no
/// session (a committee larger than the game sets' questions per part): every start here is
/// then refused `game_not_here`.
fn warn_if_the_share_serves_no_session(
    game: &AdmissionGame,
    network: &hco_oracle::NetworkParams,
    now: u64,
) {
    if let Ok(false) = game.share_serves(now) {
        tracing::warn!(
            members = network.committee.len(),
            "this member's share of the current window's admission-game questions makes no \
             session: agents starting here get `game_not_here`; give each part of the game \
             sets at least as many questions as the committee has members, or raise \
             `network.narrative.sets_per_window`"
        );
    }
}

/// The share of each window's game questions `me` shows: a member's position in the committee,
/// so that the committee together shows a question to one failed session a window; a gateway
/// outside the committee (whose credentials no member's verifier pins) shows them all.
fn game_share(network: &hco_oracle::NetworkParams, me: &hco_oracle::NodeId) -> Share {
    network
        .committee
        .iter()
        .position(|m| m == me)
        .and_then(|i| Share::of(i, network.committee.len()))
        .unwrap_or_default()
}

/// Writes `node.json` into the data directory: how tools and tests find a running node
/// (`metrics` is null when the node has no metrics listener).
fn announce(
    dir: &Path,
    me: &NodeId,
    http: &str,
    metrics: Option<&str>,
    p2p: &[String],
    params: &str,
) -> anyhow::Result<()> {
    let info = json!({ "node": me, "http": http, "metrics": metrics, "p2p": p2p, "params_digest": params, "pid": std::process::id() });
    std::fs::write(dir.join("node.json"), serde_json::to_vec_pretty(&info)?)?;
    println!("{info}");
    Ok(())
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    use hco_oracle::testing::{key, node_id, params_for};

    use super::*;

    #[test]
    fn each_member_shows_the_share_of_its_place_and_an_outsider_all() {
        let members: Vec<_> = (1..=4).map(|n| node_id(&key(n))).collect();
        let network = params_for(&members);
        for (i, m) in members.iter().enumerate() {
            assert_eq!(game_share(&network, m), Share::of(i, 4).unwrap());
        }
        assert_eq!(game_share(&network, &node_id(&key(9))), Share::default());
    }
}
