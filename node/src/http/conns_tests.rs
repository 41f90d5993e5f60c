use std::net::Ipv4Addr;

use super::*;

fn conns(per_ip: u32, budget: u32, header_ms: u64, idle_ms: u64) -> Arc<Conns> {
    Conns::new(
        ConnLimits {
            per_ip,
            budget,
            header_read_timeout: Duration::from_millis(header_ms),
            keep_alive_timeout: Duration::from_millis(idle_ms),
            trusted_proxies: vec![ip(9)],
        },
        ConnMetrics::default(),
    )
}

fn ip(last: u8) -> IpAddr {
    Ipv4Addr::new(127, 0, 0, last).into()
}

/// A request on `conn` that has finished: the connection is idle.
fn serve_one(conn: &Arc<Conn>) {
    conn.on_read();
    drop(conn.begin());
}

#[test]
fn an_address_holds_at_most_its_connections_and_a_trusted_proxy_is_not_capped() {
    let c = conns(2, 100, 10_000, 10_000);
    let a = c.admit(ip(2)).unwrap();
    let _b = c.admit(ip(2)).unwrap();
    assert_eq!(c.admit(ip(2)).err(), Some(Reason::PerIpLimit));
    let _other = c.admit(ip(3)).unwrap();
    drop(a);
    let _again = c.admit(ip(2)).unwrap();
    let proxied: Vec<_> = (0..5).map(|_| c.admit(ip(9)).unwrap()).collect();
    assert_eq!(c.open(), 3 + proxied.len());
    drop(proxied);
    assert_eq!(c.open(), 3);
}

#[test]
fn a_full_budget_sheds_the_longest_waiting_connection_never_a_busy_one() {
    let c = conns(0, 3, 10_000, 10_000);
    let busy = c.admit(ip(2)).unwrap();
    let request = busy.conn.begin();
    let silent = c.admit(ip(3)).unwrap();
    std::thread::sleep(Duration::from_millis(3));
    let kept_alive = c.admit(ip(4)).unwrap();
    std::thread::sleep(Duration::from_millis(3));
    serve_one(&kept_alive.conn);
    // Full: the connection silent since it opened has waited longest.
    let newcomer = c.admit(ip(5)).unwrap();
    assert_eq!(silent.conn.told(), Some(Reason::Shed));
    assert_eq!(kept_alive.conn.told(), None);
    assert_eq!(c.open(), 3);
    // Then the one idle since its response, before the newcomer (opened after that).
    std::thread::sleep(Duration::from_millis(3));
    let _next = c.admit(ip(6)).unwrap();
    assert_eq!(kept_alive.conn.told(), Some(Reason::Shed));
    assert_eq!(newcomer.conn.told(), None);
    // Only busy connections left: a new one is refused, and nothing is closed for it.
    let _held = (newcomer.conn.begin(), _next.conn.begin());
    assert_eq!(c.admit(ip(7)).err(), Some(Reason::BudgetFull));
    assert_eq!(busy.conn.told(), None, "a busy connection is never shed");
    assert_eq!(c.open(), 3);
    drop(request);
}

#[test]
fn the_sweep_closes_heads_that_are_late_and_connections_idle_too_long() {
    let c = conns(0, 100, 40, 120);
    let silent = c.admit(ip(2)).unwrap();
    let busy = c.admit(ip(3)).unwrap();
    let request = busy.conn.begin();
    let kept_alive = c.admit(ip(4)).unwrap();
    serve_one(&kept_alive.conn);
    std::thread::sleep(Duration::from_millis(60));
    assert_eq!(c.sweep(), 1);
    assert_eq!(silent.conn.told(), Some(Reason::HeaderTimeout));
    assert_eq!(kept_alive.conn.told(), None, "idle within its keep-alive");
    // A slow head on the kept-alive connection: the header timeout from its first byte.
    kept_alive.conn.on_read();
    std::thread::sleep(Duration::from_millis(60));
    assert_eq!(c.sweep(), 1);
    assert_eq!(kept_alive.conn.told(), Some(Reason::HeaderTimeout));
    assert_eq!(busy.conn.told(), None);
    drop(request);
    std::thread::sleep(Duration::from_millis(130));
    c.sweep();
    assert_eq!(busy.conn.told(), Some(Reason::IdleTimeout));
    assert_eq!(c.open(), 0, "closed connections leave the registry at once");
}
