// BLAKE3 in plain JavaScript: the hash and derive_key modes with a 32-byte output, enough to
// rebuild the digests the oracle signs. A port of the BLAKE3 reference implementation
// (one chunk state, a stack of chaining values); it handles inputs of any length, at a pace
// that suits messages of a few kilobytes.

const IV = new Uint32Array([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);
const PERMUTATION = [2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8];
const CHUNK_LEN = 1024;
const BLOCK_LEN = 64;
const CHUNK_START = 1;
const CHUNK_END = 2;
const PARENT = 4;
const ROOT = 8;
const DERIVE_KEY_CONTEXT = 32;
const DERIVE_KEY_MATERIAL = 64;

function g(s, a, b, c, d, x, y) {
  s[a] = (s[a] + s[b] + x) | 0;
  s[d] ^= s[a];
  s[d] = (s[d] >>> 16) | (s[d] << 16);
  s[c] = (s[c] + s[d]) | 0;
  s[b] ^= s[c];
  s[b] = (s[b] >>> 12) | (s[b] << 20);
  s[a] = (s[a] + s[b] + y) | 0;
  s[d] ^= s[a];
  s[d] = (s[d] >>> 8) | (s[d] << 24);
  s[c] = (s[c] + s[d]) | 0;
  s[b] ^= s[c];
  s[b] = (s[b] >>> 7) | (s[b] << 25);
}

/** The compression function: 16 output words. `counter` is a Number below 2^53. */
function compress(cv, block, counter, blockLen, flags) {
  const s = new Uint32Array(16);
  s.set(cv, 0);
  s.set(IV.subarray(0, 4), 8);
  s[12] = counter >>> 0;
  s[13] = Math.floor(counter / 0x100000000) >>> 0;
  s[14] = blockLen;
  s[15] = flags;
  let m = Uint32Array.from(block);
  for (let round = 0; round < 7; round++) {
    g(s, 0, 4, 8, 12, m[0], m[1]);
    g(s, 1, 5, 9, 13, m[2], m[3]);
    g(s, 2, 6, 10, 14, m[4], m[5]);
    g(s, 3, 7, 11, 15, m[6], m[7]);
    g(s, 0, 5, 10, 15, m[8], m[9]);
    g(s, 1, 6, 11, 12, m[10], m[11]);
    g(s, 2, 7, 8, 13, m[12], m[13]);
    g(s, 3, 4, 9, 14, m[14], m[15]);
    m = Uint32Array.from(PERMUTATION, (i) => m[i]);
  }
  for (let i = 0; i < 8; i++) {
    s[i] ^= s[i + 8];
    s[i + 8] ^= cv[i];
  }
  return s;
}

function wordsOf(bytes) {
  const words = new Uint32Array(16);
  for (let i = 0; i < 16; i++) {
    const o = 4 * i;
    words[i] = (bytes[o] | (bytes[o + 1] << 8) | (bytes[o + 2] << 16) | (bytes[o + 3] << 24)) >>> 0;
  }
  return words;
}

/** What a chunk or parent node produces before it is known whether it is the root. */
class Output {
  constructor(cv, block, counter, blockLen, flags) {
    Object.assign(this, { cv, block, counter, blockLen, flags });
  }
  chainingValue() {
    return compress(this.cv, this.block, this.counter, this.blockLen, this.flags).slice(0, 8);
  }
  rootBytes() {
    const words = compress(this.cv, this.block, 0, this.blockLen, this.flags | ROOT);
    const out = new Uint8Array(32);
    for (let i = 0; i < 8; i++) {
      out[4 * i] = words[i];
      out[4 * i + 1] = words[i] >>> 8;
      out[4 * i + 2] = words[i] >>> 16;
      out[4 * i + 3] = words[i] >>> 24;
    }
    return out;
  }
}

class ChunkState {
  constructor(key, counter, flags) {
    this.cv = Uint32Array.from(key);
    this.counter = counter;
    this.block = new Uint8Array(BLOCK_LEN);
    this.blockLen = 0;
    this.blocksCompressed = 0;
    this.flags = flags;
  }
  len() {
    return BLOCK_LEN * this.blocksCompressed + this.blockLen;
  }
  startFlag() {
    return this.blocksCompressed === 0 ? CHUNK_START : 0;
  }
  update(input) {
    let i = 0;
    while (i < input.length) {
      if (this.blockLen === BLOCK_LEN) {
        const words = wordsOf(this.block);
        this.cv = compress(this.cv, words, this.counter, BLOCK_LEN, this.flags | this.startFlag()).slice(0, 8);
        this.blocksCompressed++;
        this.block = new Uint8Array(BLOCK_LEN);
        this.blockLen = 0;
      }
      const take = Math.min(BLOCK_LEN - this.blockLen, input.length - i);
      this.block.set(input.subarray(i, i + take), this.blockLen);
      this.blockLen += take;
      i += take;
    }
  }
  output() {
    return new Output(this.cv, wordsOf(this.block), this.counter, this.blockLen, this.flags | this.startFlag() | CHUNK_END);
  }
}

function parentOutput(left, right, key, flags) {
  const block = new Uint32Array(16);
  block.set(left, 0);
  block.set(right, 8);
  return new Output(key, block, 0, BLOCK_LEN, PARENT | flags);
}

/** An incremental hasher; `update` takes Uint8Arrays, `finalize` returns 32 bytes. */
export class Hasher {
  constructor(key = IV, flags = 0) {
    this.key = Uint32Array.from(key);
    this.flags = flags;
    this.chunk = new ChunkState(this.key, 0, flags);
    this.stack = [];
  }

  /** The hasher of `derive_key(context, …)`. */
  static deriveKey(context) {
    const ctx = new Hasher(IV, DERIVE_KEY_CONTEXT);
    ctx.update(new TextEncoder().encode(context));
    return new Hasher(wordsOf(Uint8Array.from([...ctx.finalize(), ...new Uint8Array(32)])).subarray(0, 8), DERIVE_KEY_MATERIAL);
  }

  update(input) {
    let i = 0;
    while (i < input.length) {
      if (this.chunk.len() === CHUNK_LEN) {
        let cv = this.chunk.output().chainingValue();
        let total = this.chunk.counter + 1;
        // Merge completed subtrees: one merge per trailing zero bit of the chunk count.
        while (total % 2 === 0) {
          cv = parentOutput(this.stack.pop(), cv, this.key, this.flags).chainingValue();
          total /= 2;
        }
        this.stack.push(cv);
        this.chunk = new ChunkState(this.key, this.chunk.counter + 1, this.flags);
      }
      const take = Math.min(CHUNK_LEN - this.chunk.len(), input.length - i);
      this.chunk.update(input.subarray(i, i + take));
      i += take;
    }
    return this;
  }

  finalize() {
    let output = this.chunk.output();
    for (let i = this.stack.length - 1; i >= 0; i--) {
      output = parentOutput(this.stack[i], output.chainingValue(), this.key, this.flags);
    }
    return output.rootBytes();
  }
}

/** BLAKE3 of `input` (32 bytes). */
export function hash(input) {
  return new Hasher().update(input).finalize();
}

/** BLAKE3 `derive_key(context, material)` (32 bytes). */
export function deriveKey(context, material) {
  return Hasher.deriveKey(context).update(material).finalize();
}
