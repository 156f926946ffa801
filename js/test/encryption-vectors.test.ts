// testdata/format/encryption.json, the vectors of encrypted values that the Go
// tests check too (internal/codec TestFormatVectorsEncryption), byte for byte,
// without Redis: the AAD of every place, the exact stored bytes of a seal with
// the vector's nonce, their opening, and the refusal of every invalid case.
import { createSecretKey } from "node:crypto";
import { inspect } from "node:util";
import { describe, expect, it } from "vitest";
import { channelAAD, itemAAD, writeAAD } from "../src/aad.js";
import { Encryption, channelPlace, writePlace, type Place } from "../src/encryption.js";
import { DecryptError, InvalidConfigError } from "../src/errors.js";
import { Keyring } from "../src/keyring.js";
import { isSealed, openEnvelope, parseEnvelope, sealEnvelope, sealEnvelopeWithNonce } from "../src/seal.js";
import { loadVectors } from "./typed.js";

interface Text { text: string; hex: string }
interface VPlace {
  kind: "channel" | "write" | "item";
  prefix: Text;
  thread_id: Text;
  checkpoint_ns: Text;
  channel: Text;
  version: Text;
  checkpoint_id: Text;
  task_id: Text;
  index: number;
  namespace?: Text[];
  key: Text;
}
interface Valid { name: string; key_id: string; nonce_hex: string; place: VPlace; aad: Text; plain: { hex: string }; stored_hex: string }
interface Invalid { name: string; ring: string[]; place: VPlace; aad: Text; stored_hex: string }
const V: { keys: { key_id: string; key_hex: string }[]; valid: Valid[]; invalid: Invalid[] } = loadVectors("encryption.json");

const keyHex = new Map(V.keys.map((k) => [k.key_id, k.key_hex]));
const hex = (t: Text) => Buffer.from(t.hex, "hex");
const keyOf = (id: string) => Buffer.from(keyHex.get(id)!, "hex");

/** aadOf builds the AAD of a vector's place from its parts (the bytes, "hex"). */
function aadOf(p: VPlace): Buffer {
  switch (p.kind) {
    case "channel":
      return channelAAD(hex(p.prefix), hex(p.thread_id), hex(p.checkpoint_ns), hex(p.channel), hex(p.version));
    case "write":
      return writeAAD(hex(p.prefix), hex(p.thread_id), hex(p.checkpoint_ns), hex(p.checkpoint_id), hex(p.task_id), p.index, hex(p.channel));
    case "item":
      return itemAAD(hex(p.prefix), (p.namespace ?? []).map(hex), hex(p.key));
  }
}

/** placeOf is the saver's Place of a vector's place (channel values and pending writes), with its prefix. */
function placeOf(p: VPlace): { prefix: string; place: Place } {
  if (p.kind === "channel") return { prefix: p.prefix.text, place: channelPlace(hex(p.thread_id), hex(p.checkpoint_ns), hex(p.channel), hex(p.version)) };
  if (p.kind === "write") {
    return { prefix: p.prefix.text, place: writePlace(hex(p.thread_id), hex(p.checkpoint_ns), hex(p.checkpoint_id), hex(p.task_id), p.index, hex(p.channel)) };
  }
  throw new Error(`no saver place of kind ${p.kind}`);
}

describe("encryption.json", () => {
  it("covers every kind of place, both special and regular writes, several keys and a compressed plaintext", () => {
    expect(new Set(V.valid.map((v) => v.place.kind))).toEqual(new Set(["channel", "write", "item"]));
    expect(V.valid.some((v) => v.place.kind === "write" && v.place.index < 0)).toBe(true);
    expect(new Set(V.valid.map((v) => v.key_id)).size).toBeGreaterThan(1);
    expect(V.valid.some((v) => v.plain.hex.startsWith("7a"))).toBe(true);
    expect(V.invalid.length).toBeGreaterThanOrEqual(20);
  });

  describe("valid", () => {
    it.each(V.valid.map((v) => [v.name, v] as [string, Valid]))("%s", async (_name, v) => {
      const aad = aadOf(v.place);
      expect(aad.toString("hex")).toBe(v.aad.hex);
      expect(aad.toString("utf8")).toBe(v.aad.text);
      const key = createSecretKey(keyOf(v.key_id));
      const plain = Buffer.from(v.plain.hex, "hex");
      const stored = sealEnvelopeWithNonce(key, v.key_id, Buffer.from(v.nonce_hex, "hex"), aad, plain);
      expect(stored.toString("hex")).toBe(v.stored_hex);
      expect(isSealed(stored)).toBe(true);
      const env = parseEnvelope(Buffer.from(v.stored_hex, "hex"));
      expect(env.keyID).toBe(v.key_id);
      expect(env.nonce.toString("hex")).toBe(v.nonce_hex);
      expect(openEnvelope(key, env, aad).toString("hex")).toBe(v.plain.hex);
      // A fresh random nonce each time: the same value at the same place seals to other bytes, which open alike.
      const again = sealEnvelope(key, v.key_id, aad, plain);
      expect(again.equals(stored)).toBe(false);
      expect(openEnvelope(key, parseEnvelope(again), aad).equals(plain)).toBe(true);
      if (v.place.kind === "item") return;
      // Through the saver's policy, with a ring that holds every key (the vector's current).
      const { prefix, place } = placeOf(v.place);
      const ring = Keyring.fromKeys(v.key_id, Object.fromEntries(V.keys.map((k) => [k.key_id, keyOf(k.key_id)])));
      const enc = new Encryption(prefix, ring, false);
      expect((await enc.open(place, Buffer.from(v.stored_hex, "hex"))).toString("hex")).toBe(v.plain.hex);
      const sealed = await enc.seal(place, plain);
      expect(sealed.subarray(0, 3 + v.key_id.length).toString("latin1")).toBe(`e\x01${String.fromCharCode(v.key_id.length)}${v.key_id}`);
      expect((await enc.open(place, sealed)).equals(plain)).toBe(true);
    });
  });

  describe("invalid", () => {
    it.each(V.invalid.map((v) => [v.name, v] as [string, Invalid]))("%s", async (_name, v) => {
      expect(aadOf(v.place).toString("hex")).toBe(v.aad.hex);
      const ring = Keyring.fromKeys(v.ring[0]!, Object.fromEntries(v.ring.map((id) => [id, keyOf(id)])));
      const { prefix, place } = placeOf(v.place);
      const stored = Buffer.from(v.stored_hex, "hex");
      const err = await new Encryption(prefix, ring, false).open(place, stored).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(DecryptError);
      expect((err as DecryptError).code).toBe("DECRYPT");
      // The error names the place, never a byte of the value (its hex, or its bytes as text).
      const msg = (err as Error).message;
      expect(msg).toContain(JSON.stringify(v.place.thread_id.text));
      const body = stored.subarray(Math.min(stored.length, 3));
      if (body.length >= 8) {
        for (const shown of [body.toString("hex"), body.toString("base64"), body.toString("latin1")]) expect(msg).not.toContain(shown.slice(0, 16));
      }
    });
  });

  it("a reader without a keyring refuses every encrypted vector, and reads a plain value as it is", async () => {
    const off = new Encryption("redcheck", undefined, false);
    for (const v of V.valid.filter((x) => x.place.kind !== "item")) {
      const { place } = placeOf(v.place);
      await expect(off.open(place, Buffer.from(v.stored_hex, "hex"))).rejects.toBeInstanceOf(DecryptError);
      expect((await off.open(place, Buffer.from(v.plain.hex, "hex"))).toString("hex")).toBe(v.plain.hex);
      expect((await off.seal(place, Buffer.from(v.plain.hex, "hex"))).toString("hex")).toBe(v.plain.hex);
    }
  });

  it("every seal takes a nonce of its own, across refills of the nonce pool", () => {
    const key = createSecretKey(keyOf("k1"));
    const nonces = new Set<string>();
    for (let i = 0; i < 1000; i++) nonces.add(parseEnvelope(sealEnvelope(key, "k1", Buffer.alloc(0), Buffer.from("4:json1"))).nonce.toString("hex"));
    expect(nonces.size).toBe(1000);
  });

  it("readPlaintext reads the plain vectors; the empty marker is never sealed and always read", async () => {
    const ring = Keyring.fromKeys("k1", { k1: keyOf("k1") });
    const plainCases = V.invalid.filter((v) => !isSealed(Buffer.from(v.stored_hex, "hex")));
    expect(plainCases.length).toBeGreaterThanOrEqual(2);
    for (const v of plainCases) {
      const { prefix, place } = placeOf(v.place);
      const stored = Buffer.from(v.stored_hex, "hex");
      expect((await new Encryption(prefix, ring, true).open(place, stored)).equals(stored)).toBe(true);
    }
    const enc = new Encryption("redcheck", ring, false);
    const p = channelPlace("t", "", "c", "1");
    expect((await enc.seal(p, Buffer.alloc(0))).length).toBe(0);
    expect((await enc.open(p, Buffer.alloc(0))).length).toBe(0);
  });
});

describe("Keyring", () => {
  const k1 = keyOf("k1");
  const k2 = keyOf("k2");

  it.each([
    ["a current id of no key", () => Keyring.fromKeys("k3", { k1 })],
    ["a key of 31 bytes", () => Keyring.fromKeys("k1", { k1: k1.subarray(1) })],
    ["a key of 33 bytes", () => Keyring.fromKeys("k1", { k1: Buffer.concat([k1, Buffer.from([0])]) })],
    ["a key that is a string", () => Keyring.fromKeys("k1", { k1: k1.toString("hex") as unknown as Uint8Array })],
    ["an empty key id", () => Keyring.fromKeys("", { "": k1 })],
    ["a key id with a space", () => Keyring.fromKeys("k 1", { "k 1": k1 })],
    ["a key id of 65 bytes", () => Keyring.fromKeys("k".repeat(65), { ["k".repeat(65)]: k1 })],
    ["a non-ASCII key id", () => Keyring.fromKeys("clé", { clé: k1 })],
    ["a bad key beside a good current one", () => Keyring.fromKeys("k1", new Map([["k1", k1], ["k2", k2.subarray(0, 16)]]))],
  ])("refuses %s at construction, naming no key byte", (_name, make) => {
    let err: unknown;
    try {
      make();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidConfigError);
    for (const k of [k1, k2]) {
      expect((err as Error).message).not.toContain(k.toString("hex"));
      expect((err as Error).message).not.toContain(k.toString("hex").slice(0, 16));
    }
  });

  it("shows no key in toString, JSON or util.inspect, and copies the caller's key", async () => {
    const mine = Buffer.from(k1);
    const ring = Keyring.fromKeys("k1", { k1: mine, k2 });
    const sealed = await new Encryption("p", ring, false).seal(channelPlace("t", "", "c", "1"), Buffer.from("4:json1"));
    mine.fill(0);
    for (const shown of [String(ring), JSON.stringify(ring), inspect(ring, { depth: 10, showHidden: true }), JSON.stringify({ ring })]) {
      expect(shown).toContain("k1");
      for (const k of [k1, k2]) {
        expect(shown).not.toContain(k.toString("hex").slice(0, 8));
        expect(shown).not.toContain(k.toString("base64").slice(0, 8));
      }
    }
    expect((await new Encryption("p", ring, false).open(channelPlace("t", "", "c", "1"), sealed)).toString()).toBe("4:json1");
  });

  it("fromFunction checks the current key, caches every key, asks again after a failure, and refuses an unknown id", async () => {
    const calls: string[] = [];
    let down = false;
    const fetch = async (id: string) => {
      calls.push(id);
      if (down) throw new Error("KMS unreachable");
      return id === "k1" ? k1 : id === "k2" ? k2 : undefined;
    };
    const ring = await Keyring.fromFunction("k2", fetch);
    expect(calls).toEqual(["k2"]);
    const enc = new Encryption("p", ring, false);
    const p = channelPlace("t", "", "c", "1");
    const sealed = await enc.seal(p, Buffer.from("4:json1"));
    await enc.open(p, sealed);
    expect(calls).toEqual(["k2"]); // cached

    // A value of k1: concurrent reads share one fetch; a KMS failure is no DecryptError and is retried.
    const byK1 = await new Encryption("p", Keyring.fromKeys("k1", { k1 }), false).seal(p, Buffer.from("4:json2"));
    down = true;
    const failed = await enc.open(p, byK1).then(() => undefined, (e: unknown) => e);
    expect(failed).toBeInstanceOf(Error);
    expect(failed).not.toBeInstanceOf(DecryptError);
    expect((failed as Error).message).toContain("KMS unreachable");
    down = false;
    const got = await Promise.all([enc.open(p, byK1), enc.open(p, byK1), enc.open(p, byK1)]);
    expect(got.map(String)).toEqual(["4:json2", "4:json2", "4:json2"]);
    expect(calls).toEqual(["k2", "k1", "k1"]);

    // An id the function does not know (undefined, or a DecryptError it throws) is a DecryptError.
    const byK3 = await new Encryption("p", Keyring.fromKeys("k3", { k3: k2 }), false).seal(p, Buffer.from("4:json3"));
    await expect(enc.open(p, byK3)).rejects.toBeInstanceOf(DecryptError);
    const strict = await Keyring.fromFunction("k1", (id) => {
      if (id !== "k1") throw new DecryptError("unknown");
      return k1;
    });
    await expect(new Encryption("p", strict, false).open(p, byK3)).rejects.toThrow(/no key "k3"/);

    // A function that serves a bad key, or no current key, fails at construction.
    await expect(Keyring.fromFunction("k1", () => k1.subarray(2))).rejects.toBeInstanceOf(InvalidConfigError);
    await expect(Keyring.fromFunction("k9", fetch)).rejects.toBeInstanceOf(DecryptError);
    await expect(Keyring.fromFunction("bad id", fetch)).rejects.toBeInstanceOf(InvalidConfigError);
  });

  it("a saver option that is no Keyring, or readPlaintext without one, is refused", () => {
    expect(() => new Encryption("p", { currentKeyId: "k1" } as unknown as Keyring, false)).toThrow(InvalidConfigError);
    expect(() => new Encryption("p", undefined, true)).toThrow(InvalidConfigError);
  });
});
