import { describe, expect, it } from "vitest";
import { byteOrder } from "../src/walk.js";

const sign = (n: number) => (n < 0 ? -1 : n > 0 ? 1 : 0);
const bytes = (a: string, b: string) => Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));

describe("byteOrder", () => {
  it.each([
    ["", ""], ["a", ""], ["", "a"], ["a", "b"], ["ab", "a"], ["messages", "branch:to:agent"],
    ["\u00e9", "z"], ["\uffff", "\u{10000}"], ["\ue000", "\ud83d\ude00"], ["\ud83d\ude00", "\ud83d\ude01"],
    ["\ud800", "\ufffd"], ["\ud800", "\ufffe"], ["\udc00x", "\ud800y"], ["a\ud800", "a\ud800\udc00"], ["\ud83d", "\ud83d\ude00"],
  ])("orders %j and %j as their UTF-8 bytes", (a, b) => {
    expect(sign(byteOrder(a, b))).toBe(sign(bytes(a, b)));
  });

  it("agrees with the UTF-8 bytes on random strings of ASCII, BMP, astral and lone surrogate characters", () => {
    const pool = ["a", "b", "~", "\u00e9", "\u0800", "\ud7ff", "\ue000", "\uffff", "\ud83d\ude00", "\u{10ffff}", "\ud800", "\udfff", "\ufffd"];
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
    const word = () => Array.from({ length: rand(5) }, () => pool[rand(pool.length)]).join("");
    for (let k = 0; k < 5000; k++) {
      const a = word();
      const b = rand(4) === 0 ? a + word() : word();
      expect(sign(byteOrder(a, b)), `${JSON.stringify(a)} vs ${JSON.stringify(b)}`).toBe(sign(bytes(a, b)));
    }
  });
});
