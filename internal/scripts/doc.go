// Package scripts holds redcheck's Lua scripts, embedded from the .lua files
// beside this file. Each file opens with a header naming its KEYS, its ARGV
// and what it returns; lib.lua holds the helpers every script shares, of
// which those a script calls are prepended to it at load time (Source),
// after a prelude that makes KEYS and ARGV locals of the chunk.
//
// Every write of a saver is one script, so it is atomic and one round trip;
// every read is one script as well. All keys a script touches share one hash
// tag (see package keys), so the scripts run unchanged on Redis Cluster. The
// scripts use only plain Redis 7 commands and the Lua standard library (no
// cmsgpack, bit or struct), so they run on Valkey and on miniredis too. No
// caller data ever becomes Lua source: scripts are static, data travels in
// KEYS and ARGV.
//
// The scripts build some key names themselves, from bases passed in ARGV and
// the suffixes documented in package keys (":n:", ":cp:", ":idx", ":blobs");
// the keys package and these files must agree.
package scripts
