import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { crc16, keySlot, SLOT_COUNT } from "../../../src/cluster/slot.ts";

const enc = new TextEncoder();

/** Bit-by-bit CRC16/XMODEM, the reference the table-driven one is checked against. */
function crcReference(bytes: Uint8Array): number {
  let crc = 0;
  for (const b of bytes) {
    crc ^= b << 8;
    for (let i = 0; i < 8; i++) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc;
}

/** The slot as the Redis Cluster specification defines it, on bytes. */
function slotReference(bytes: Uint8Array): number {
  const open = bytes.indexOf(0x7b);
  if (open !== -1) {
    const close = bytes.indexOf(0x7d, open + 1);
    if (close > open + 1) return crcReference(bytes.subarray(open + 1, close)) % SLOT_COUNT;
  }
  return crcReference(bytes) % SLOT_COUNT;
}

describe("crc16", () => {
  it("gives the XMODEM check value of 123456789", () => {
    assert.equal(crc16(enc.encode("123456789")), 0x31c3);
  });
  it("hashes a sub-range", () => {
    const b = enc.encode("xx123456789yy");
    assert.equal(crc16(b, 2, 11), 0x31c3);
  });
});

describe("keySlot", () => {
  it("matches the slots redis-server reports (CLUSTER KEYSLOT)", () => {
    // Values from CLUSTER KEYSLOT on redis 7.0.
    assert.equal(keySlot("foo"), 12182);
    assert.equal(keySlot("bar"), 5061);
    assert.equal(keySlot("hello"), 866);
    assert.equal(keySlot(""), 0);
    assert.equal(keySlot("{user1000}.following"), keySlot("user1000"));
  });
  it("hashes only the first non-empty hash tag", () => {
    assert.equal(keySlot("{user1}.name"), keySlot("{user1}.email"));
    assert.equal(keySlot("a{b}c{d}"), keySlot("b"));
    assert.equal(keySlot("{}x"), slotReference(enc.encode("{}x")));
    assert.notEqual(keySlot("{}x"), keySlot("x"));
    assert.equal(keySlot("{{a}}"), keySlot("{a"));
    assert.equal(keySlot("no}{tag"), slotReference(enc.encode("no}{tag")));
    assert.equal(keySlot("{open"), slotReference(enc.encode("{open")));
  });
  it("hashes a number key as it is sent: Infinity as +inf, -Infinity as -inf", () => {
    assert.equal(keySlot(Infinity), keySlot("+inf"));
    assert.equal(keySlot(-Infinity), keySlot("-inf"));
    assert.notEqual(keySlot(Infinity), keySlot("Infinity"));
  });

  it("gives the same slot for a string, its UTF-8 bytes and a number", () => {
    const keys = [
      "ascii",
      "café",
      "日本語{键}x",
      "emoji😀",
      "{😀}a",
      "\u0000\u007f\u0080\u07ff\u0800",
    ];
    for (const k of keys) {
      assert.equal(keySlot(k), keySlot(enc.encode(k)), k);
      assert.equal(keySlot(k), slotReference(enc.encode(k)), k);
    }
    assert.equal(keySlot(12345), keySlot("12345"));
    assert.equal(keySlot(-1.5), keySlot("-1.5"));
  });
  it("hashes a lone surrogate like its UTF-8 replacement character", () => {
    assert.equal(keySlot("a\ud800b"), slotReference(enc.encode("a\ud800b")));
    assert.equal(keySlot("a\udc00"), slotReference(enc.encode("a\udc00")));
  });
  it("agrees with the bytewise definition on random keys", () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let n = 0; n < 2000; n++) {
      const len = Math.floor(rnd() * 20);
      let s = "";
      for (let i = 0; i < len; i++) {
        const r = rnd();
        s += r < 0.1
          ? "{"
          : r < 0.2
          ? "}"
          : r < 0.9
          ? String.fromCharCode(32 + Math.floor(rnd() * 95))
          : String.fromCodePoint(Math.floor(rnd() * 0x10ffff) & ~0x800);
      }
      const b = enc.encode(s);
      assert.equal(keySlot(s), slotReference(b), JSON.stringify(s));
      assert.equal(keySlot(b), slotReference(b));
    }
  });
  it("rejects other key types", () => {
    assert.throws(() => keySlot({} as unknown as string), TypeError);
  });
});
