package main

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/graphstate/redcheck/checkpoint"
)

// keyFlags are the flags of the commands that read or write encrypted
// values (docs/cli.md, "Keys"): the keyring comes from the caller, one key
// per --key (a file) or --key-env (an environment variable), the current
// key named by --current-key. A key is never printed, not in an error
// either.
type keyFlags struct {
	files   keyList // id=path
	envs    keyList // id=VARIABLE
	current *string
	plain   *bool
}

// keyList is a repeatable id=value flag.
type keyList []string

func (l *keyList) String() string { return strings.Join(*l, ",") }
func (l *keyList) Set(s string) error {
	id, v, ok := strings.Cut(s, "=")
	if !ok || id == "" || v == "" {
		return errors.New("want ID=VALUE")
	}
	*l = append(*l, s)
	return nil
}

// addKeyFlags defines --key, --key-env, --current-key and --read-plaintext
// on fs; plainUsage is the usage line of --read-plaintext.
func addKeyFlags(fs *flag.FlagSet, plainUsage string) *keyFlags {
	k := &keyFlags{}
	fs.Var(&k.files, "key", "a key of the keyring, ID=FILE: FILE holds the 32-byte key, raw or as 64 hex digits or base64\n(repeatable)")
	fs.Var(&k.envs, "key-env", "a key of the keyring, ID=VARIABLE: the environment variable holds the key as base64 or\n64 hex digits (repeatable)")
	k.current = fs.String("current-key", "", "the id of the keyring's current key (default: the only key given)")
	k.plain = fs.Bool("read-plaintext", false, plainUsage)
	return k
}

// ring returns the keyring the flags name, nil when they name no key.
func (k *keyFlags) ring() (*checkpoint.Keyring, error) {
	keys := map[string][]byte{}
	add := func(id string, key []byte, from string) error {
		if _, dup := keys[id]; dup {
			return fmt.Errorf("key %q given twice", id)
		}
		if key == nil {
			return fmt.Errorf("key %q (%s): want %d bytes, raw, or as 64 hex digits or base64", id, from, checkpoint.KeySize)
		}
		keys[id] = key
		return nil
	}
	for _, s := range k.files {
		id, path, _ := strings.Cut(s, "=")
		b, err := os.ReadFile(path)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the path is named below
			}
			return nil, fmt.Errorf("key %q: reading %s: %v", id, path, err)
		}
		if err := add(id, parseKey(b), "file "+path); err != nil {
			return nil, err
		}
	}
	for _, s := range k.envs {
		id, name, _ := strings.Cut(s, "=")
		v, ok := os.LookupEnv(name)
		if !ok {
			return nil, fmt.Errorf("key %q: the environment variable %s is not set", id, name)
		}
		key := parseKey([]byte(v))
		if len(v) == checkpoint.KeySize { // raw bytes are for files only
			key = nil
		}
		if err := add(id, key, "variable "+name); err != nil {
			return nil, err
		}
	}
	if len(keys) == 0 {
		if *k.current != "" {
			return nil, fmt.Errorf("--current-key %q names no key: give the keys with --key or --key-env", *k.current)
		}
		if *k.plain {
			return nil, errors.New("--read-plaintext needs the keys (--key or --key-env)")
		}
		return nil, nil
	}
	current := *k.current
	if current == "" {
		if len(keys) > 1 {
			return nil, errors.New("several keys: name the current one with --current-key")
		}
		for id := range keys {
			current = id
		}
	}
	ring, err := checkpoint.NewKeyring(current, keys)
	clear(keys)
	return ring, err
}

// parseKey reads a key: 32 raw bytes, or (surrounding spaces and newlines
// aside) 64 hex digits or the base64 of 32 bytes; nil for anything else.
func parseKey(b []byte) []byte {
	if len(b) == checkpoint.KeySize {
		return b
	}
	s := strings.TrimSpace(string(b))
	if len(s) == 2*checkpoint.KeySize {
		if key, err := hex.DecodeString(s); err == nil {
			return key
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if key, err := enc.DecodeString(s); err == nil && len(key) == checkpoint.KeySize {
			return key
		}
	}
	return nil
}

// keyringFor is ring for a command that may run without keys: ok is false
// (after printing the error) when the flags are wrong.
func (k *keyFlags) keyringFor(name string, stderr io.Writer) (*checkpoint.Keyring, bool) {
	ring, err := k.ring()
	if err != nil {
		fmt.Fprintf(stderr, "redcheck %s: %v\n", name, err)
		return nil, false
	}
	return ring, true
}
