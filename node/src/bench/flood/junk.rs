//! The flood's junk registrations and the sender that posts them.
//!
//! Junk that carries no proof of work is prepared before the flood (distinct identities, each
//! signed), so the flood's threads only write bytes, as a flooding tool does; junk that
//! carries the network's proof is computed while it is sent, because a proof is only accepted
//! fresh (the attacker cannot stockpile it). [`RawPoster`] is a keep-alive HTTP/1.1
//! connection that writes a prepared request and reads its status and error code: a few
//! microseconds of the load generator's CPU per request, where a general client costs tens.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use hco_challenges::Class;
use hco_oracle::SignedRegister;

/// The path registrations are posted to.
pub const PATH: &str = "/v1/identities";

/// `n` junk registration bodies (JSON) of distinct identities from `first_seed` on, without a
/// proof of work, dated `now_ms`; prepared on every core.
pub fn prepare(n: u64, first_seed: u64, now_ms: u64) -> Vec<Vec<u8>> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from) as u64;
    let chunk = n.div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let parts: Vec<_> = (0..threads)
            .map(|k| {
                s.spawn(move || {
                    let from = k * chunk;
                    let to = ((k + 1) * chunk).min(n);
                    (from..to)
                        .map(|i| body(first_seed + i, now_ms, 0))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        parts
            .into_iter()
            .flat_map(|p| p.join().unwrap_or_default())
            .collect()
    })
}

/// One junk registration body: identity `seed`, dated `now_ms`, with a proof of `pow_bits`.
pub fn body(seed: u64, now_ms: u64, pow_bits: u32) -> Vec<u8> {
    let key = hco_oracle::testing::key(seed);
    let reg = SignedRegister::proven(&key, Class::Agent.into(), now_ms, pow_bits);
    serde_json::to_vec(&reg).unwrap_or_default()
}

/// What the node answered.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// 201: registered.
    Registered,
    /// Refused with this code.
    Refused(String),
}

/// A keep-alive HTTP/1.1 connection posting JSON bodies to [`PATH`].
pub struct RawPoster {
    addr: SocketAddr,
    conn: Option<BufReader<TcpStream>>,
}

impl RawPoster {
    /// A poster for the node listening on `addr` (connects on first use).
    pub fn new(addr: SocketAddr) -> Self {
        Self { addr, conn: None }
    }

    /// Posts `body`; reconnects once if the kept-alive connection was closed.
    pub fn post(&mut self, body: &[u8]) -> std::io::Result<Outcome> {
        match self.try_post(body) {
            Ok(outcome) => Ok(outcome),
            Err(_) => {
                self.conn = None;
                self.try_post(body)
            }
        }
    }

    fn try_post(&mut self, body: &[u8]) -> std::io::Result<Outcome> {
        if self.conn.is_none() {
            let stream = TcpStream::connect_timeout(&self.addr, Duration::from_secs(5))?;
            stream.set_nodelay(true)?;
            stream.set_read_timeout(Some(Duration::from_secs(30)))?;
            self.conn = Some(BufReader::new(stream));
        }
        let Some(conn) = self.conn.as_mut() else {
            return Err(std::io::ErrorKind::NotConnected.into());
        };
        let mut request = format!(
            "POST {PATH} HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\n\
             content-length: {}\r\n\r\n",
            self.addr,
            body.len()
        )
        .into_bytes();
        request.extend_from_slice(body);
        conn.get_mut().write_all(&request)?;
        let (status, reply) = read_reply(conn)?;
        if status == 201 {
            return Ok(Outcome::Registered);
        }
        let code = serde_json::from_slice::<serde_json::Value>(&reply)
            .ok()
            .and_then(|v| v["code"].as_str().map(str::to_owned))
            .unwrap_or_else(|| format!("http_{status}"));
        Ok(Outcome::Refused(code))
    }
}

/// Reads one response with a `content-length` body: its status and body.
fn read_reply(conn: &mut BufReader<TcpStream>) -> std::io::Result<(u16, Vec<u8>)> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned());
    let mut line = String::new();
    if conn.read_line(&mut line)? == 0 {
        return Err(std::io::ErrorKind::UnexpectedEof.into());
    }
    let status: u16 = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| bad("no status"))?;
    let mut length = 0usize;
    loop {
        line.clear();
        if conn.read_line(&mut line)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().map_err(|_| bad("content-length"))?;
        }
    }
    if length > 1 << 20 {
        return Err(bad("reply too long"));
    }
    let mut reply = vec![0; length];
    conn.read_exact(&mut reply)?;
    Ok((status, reply))
}
