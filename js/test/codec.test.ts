import { describe, expect, it } from "vitest";
import { pack, unpack } from "../src/codec.js";

describe("pack", () => {
  it.each([
    [["json", "{}"], "4:json{}"],
    [["messages", "", "tail"], "8:messages0:tail"],
    [["", ""], "0:"],
    [["é😀", "x"], "6:é😀x"],
    [["\ud800", "x"], "3:\ufffdx"], // a lone surrogate is written as UTF-8 writes it: U+FFFD
    [["only"], "only"],
  ])("packs %j as %j", (parts, want) => {
    expect(pack(...(parts as string[])).toString("utf8")).toBe(want);
  });

  it("packs byte parts, views of larger buffers included, and unpacks them back", () => {
    const big = Buffer.alloc(20_000, 0x41);
    const view = Buffer.from("--value--").subarray(2, 7);
    const got = pack("messages", view, big);
    expect(got.subarray(0, 13).toString("latin1")).toBe("8:messages5:v");
    expect(unpack(got, 3)).toEqual([Buffer.from("messages"), Buffer.from("value"), big]);
    expect(pack(new Uint8Array([1, 2]), new Uint8Array(0))).toEqual(Buffer.from([0x32, 0x3a, 1, 2]));
  });
});
