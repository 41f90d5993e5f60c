#!/usr/bin/env node
// An observer of an HCO network in js-libp2p, a libp2p implementation other than the node's
// (rust-libp2p): it dials one node, answers its pings, subscribes to every gossip topic, stays
// connected for the given time and prints what it saw, one JSON object per line:
//
//   {"event":"connected", ...}                      the connection to the node is up
//   {"event":"identify", ...}                       what the node said about itself
//   {"event":"ping", ...}                           one per ping of the node answered
//   {"event":"message","topic":…,"len":…,"id":…,"from":…,"head":…}
//                                                    one per gossip message received; `head`
//                                                    is the hex of the first 512 bytes
//   {"event":"disconnected", ...}                   the connection closed before the end
//   {"event":"summary", ...}                        last: time connected, messages by topic,
//                                                    pings answered, disconnects
//
// Usage: node observer.mjs <multiaddr ending in /p2p/<peer id>> <seconds>
//
// What it takes to interoperate (docs/protocol.md, section 1 to 3): TCP, Noise, Yamux; a ping
// responder (a node drops peers whose ping fails); gossipsub with strict signing; and the
// network's message id, the lower-case hex of BLAKE3(data) as ASCII bytes. With gossipsub's
// default id (author key and sequence number) the messages still arrive, but the ids in the
// node's IHAVE gossip never match ours, so we would ask (IWANT) for messages we already hold and
// count the node as breaking its IWANT promises.

// First: what js-libp2p needs of Node.js 22, on Node.js 20.
import './node20.mjs'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { gossipsub } from '@libp2p/gossipsub'
import { identify } from '@libp2p/identify'
import { ping } from '@libp2p/ping'
import { tcp } from '@libp2p/tcp'
import { multiaddr } from '@multiformats/multiaddr'
import { blake3 } from '@noble/hashes/blake3.js'
import { bytesToHex } from '@noble/hashes/utils.js'
import { createLibp2p } from 'libp2p'

// Every topic a node runs (node/src/network/protocol.rs). "Members only" restricts publishing;
// anyone may subscribe and read.
const TOPICS = [
  'hco/registry/1',
  'hco/registry-batch/1',
  'hco/passkey/1',
  'hco/evidence/1',
  'hco/acceptance/1',
  'hco/summary/1',
  'hco/reveal/2',
  'hco/witness/2',
  'hco/link/3'
]
// The size of a ping payload (the ping spec): each 32 bytes echoed is one ping answered.
const PING_LENGTH = 32
const HEAD_BYTES = 512

const [target, secondsArg] = process.argv.slice(2)
const seconds = Number(secondsArg)
if (target == null || !Number.isFinite(seconds) || seconds <= 0) {
  process.stderr.write('usage: node observer.mjs <multiaddr/p2p/<peer id>> <seconds>\n')
  process.exit(2)
}

const print = (value) => process.stdout.write(JSON.stringify(value) + '\n')

const addr = multiaddr(target)
const remote = addr.getComponents().findLast((c) => c.name === 'p2p')?.value
if (remote == null) {
  process.stderr.write(`${target}: the address must end in /p2p/<peer id>\n`)
  process.exit(2)
}

let pingsAnswered = 0

// @libp2p/ping's responder, counting what it echoes.
function countingPing (init) {
  const make = ping(init)
  return (components) => {
    const service = make(components)
    const handle = service.handlePing
    service.handlePing = (stream, connection) => {
      const send = stream.send.bind(stream)
      let echoed = 0
      stream.send = (buf) => {
        echoed += buf.byteLength
        while (echoed >= PING_LENGTH) {
          echoed -= PING_LENGTH
          pingsAnswered++
          print({ event: 'ping', at_ms: Date.now() - started, stream: stream.id })
        }
        return send(buf)
      }
      return handle(stream, connection)
    }
    return service
  }
}

const node = await createLibp2p({
  addresses: { listen: [] },
  transports: [tcp()],
  connectionEncrypters: [noise()],
  streamMuxers: [yamux()],
  services: {
    identify: identify(),
    // rust-libp2p sends every ping of a connection on one stream, 15 s apart; @libp2p/ping's
    // responder aborts an inbound stream after its `timeout` (10 s by default), so with the
    // default every other ping of the node fails (rust-libp2p forgives one failure in a row and
    // opens a new stream). A long timeout answers them all.
    ping: countingPing({ timeout: 10 * 60_000 }),
    pubsub: gossipsub({
      globalSignaturePolicy: 'StrictSign',
      // The network's message id: the lower-case hex of BLAKE3(data), as ASCII.
      msgIdFn: (msg) => new TextEncoder().encode(bytesToHex(blake3(msg.data))),
      msgIdToStrFn: (id) => new TextDecoder().decode(id),
      emitSelf: false
    })
  }
})

const started = Date.now()
const byTopic = {}
const bytesByTopic = {}
let connectedAt = null
let connectedMs = 0
let disconnects = 0
let connections = 0
let identified = null
let nodeTopics = new Set()

node.addEventListener('connection:open', (evt) => {
  const conn = evt.detail
  if (conn.remotePeer.toString() !== remote) return
  connections++
  if (connectedAt == null) connectedAt = Date.now()
  print({
    event: 'connected',
    at_ms: Date.now() - started,
    remote: conn.remoteAddr.toString(),
    encryption: conn.encryption,
    multiplexer: conn.multiplexer
  })
})

node.addEventListener('connection:close', (evt) => {
  const conn = evt.detail
  if (conn.remotePeer.toString() !== remote) return
  connections--
  if (connections === 0 && connectedAt != null && !stopping) {
    connectedMs += Date.now() - connectedAt
    connectedAt = null
    disconnects++
    print({ event: 'disconnected', at_ms: Date.now() - started })
  }
})

node.addEventListener('peer:identify', (evt) => {
  const { peerId, agentVersion, protocolVersion, protocols } = evt.detail
  if (peerId.toString() !== remote) return
  identified = { agent_version: agentVersion, protocol_version: protocolVersion, protocols }
  print({ event: 'identify', ...identified })
})

const pubsub = node.services.pubsub
pubsub.addEventListener('subscription-change', (evt) => {
  if (evt.detail.peerId.toString() !== remote) return
  for (const { topic, subscribe } of evt.detail.subscriptions) {
    if (subscribe) nodeTopics.add(topic)
    else nodeTopics.delete(topic)
  }
})

pubsub.addEventListener('gossipsub:message', (evt) => {
  const { msg, msgId, propagationSource } = evt.detail
  byTopic[msg.topic] = (byTopic[msg.topic] ?? 0) + 1
  bytesByTopic[msg.topic] = (bytesByTopic[msg.topic] ?? 0) + msg.data.byteLength
  print({
    event: 'message',
    at_ms: Date.now() - started,
    topic: msg.topic,
    len: msg.data.byteLength,
    id: msgId,
    from: msg.type === 'signed' ? msg.from.toString() : null,
    via: propagationSource.toString(),
    head: bytesToHex(msg.data.subarray(0, HEAD_BYTES))
  })
})

for (const topic of TOPICS) pubsub.subscribe(topic)

let stopping = false
let error = null
try {
  await node.dial(addr, { signal: AbortSignal.timeout(10_000) })
} catch (err) {
  error = `dial ${target}: ${err.message}`
}

if (error == null) {
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + seconds * 1000 - Date.now())))
}
stopping = true
if (connectedAt != null) connectedMs += Date.now() - connectedAt
const toNode = node.getConnections().filter((c) => c.remotePeer.toString() === remote)
// The gossipsub version the two sides agreed on, from the open gossip streams.
const gossipProtocols = [...new Set(toNode.flatMap((c) => c.streams)
  .map((s) => s.protocol)
  .filter((p) => p?.startsWith('/meshsub/')))]
print({
  event: 'summary',
  seconds,
  error,
  connected_ms: connectedMs,
  connected_at_end: toNode.length > 0,
  disconnects,
  pings_answered: pingsAnswered,
  messages: Object.values(byTopic).reduce((a, b) => a + b, 0),
  messages_by_topic: byTopic,
  bytes_by_topic: bytesByTopic,
  node_topics: [...nodeTopics].sort(),
  gossip_protocols: gossipProtocols,
  identify: identified
})
await node.stop()
process.exit(error == null ? 0 : 1)
