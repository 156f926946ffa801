package redissaver_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/graphstate/redcheck/checkpoint"
	"github.com/graphstate/redcheck/internal/redistest"
	"github.com/graphstate/redcheck/redissaver"
	"github.com/redis/go-redis/v9"
)

// testPKI is a CA and a server certificate for 127.0.0.1 and localhost,
// made at test time and written as PEM files.
type testPKI struct {
	caFile, certFile, keyFile string
	pool                      *x509.CertPool
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "redcheck test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, ca, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	p := testPKI{
		caFile:   filepath.Join(dir, "ca.pem"),
		certFile: filepath.Join(dir, "server.pem"),
		keyFile:  filepath.Join(dir, "server-key.pem"),
		pool:     x509.NewCertPool(),
	}
	p.pool.AddCert(ca)
	for file, block := range map[string]*pem.Block{
		p.caFile:   {Type: "CERTIFICATE", Bytes: caDER},
		p.certFile: {Type: "CERTIFICATE", Bytes: srvDER},
		p.keyFile:  {Type: "EC PRIVATE KEY", Bytes: keyDER},
	} {
		if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// requireTLSRedis skips the test when redis-server was built without TLS.
func requireTLSRedis(t *testing.T) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return // StartServer skips or fails with its own message
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, bin, "--port", "0", "--tls-port", "1", "--tls-cert-file", "/nonexistent").CombinedOutput()
	if s := string(out); strings.Contains(s, "Bad directive") || strings.Contains(s, "not supported") || strings.Contains(s, "TLS is not") {
		t.Skipf("redis-server lacks TLS support (build it with BUILD_TLS=yes):\n%s", s)
	}
}

// roundTrip puts two checkpoints with writes and reads them back.
func roundTrip(t *testing.T, s *redissaver.Saver) {
	t.Helper()
	ctx := context.Background()
	cfg := checkpoint.Config{ThreadID: "secure", CheckpointNS: ""}
	for i := range 2 {
		cp := checkpoint.Checkpoint{V: 4, ID: checkpoint.NewID(), ChannelValues: map[string]any{"v": i}, ChannelVersions: map[string]string{"v": strconv.Itoa(i + 1)}}
		var err error
		if cfg, err = s.Put(ctx, cfg, cp, checkpoint.Metadata{"step": i}, cp.ChannelVersions); err != nil {
			t.Fatalf("Put: %v", err)
		}
		if err := s.PutWrites(ctx, cfg, []checkpoint.Write{{Channel: "w", Value: i}}, "task", ""); err != nil {
			t.Fatalf("PutWrites: %v", err)
		}
	}
	tup, err := s.GetTuple(ctx, checkpoint.Config{ThreadID: "secure"})
	if err != nil {
		t.Fatalf("GetTuple: %v", err)
	}
	if tup.Config.CheckpointID != cfg.CheckpointID || tup.Checkpoint.ChannelValues["v"] != int64(1) && tup.Checkpoint.ChannelValues["v"] != 1 || len(tup.PendingWrites) != 1 {
		t.Errorf("GetTuple = %v / %v / %v", tup.Config, tup.Checkpoint.ChannelValues, tup.PendingWrites)
	}
	n := 0
	for _, err := range s.List(ctx, checkpoint.ListQuery{ThreadID: "secure"}) {
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("List: %d checkpoints, want 2", n)
	}
	requireSound(t, s, "")
}

// TestTLSAndAuth: a redis-server that serves TLS only (its plain port is
// closed once it is up), with a certificate generated at test time and a
// password; the saver works through the client the caller configures.
func TestTLSAndAuth(t *testing.T) {
	requireTLSRedis(t)
	pki := newTestPKI(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tlsPort := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	const password = "tls-s3cret"
	plain := redistest.StartServer(t,
		"--tls-port", strconv.Itoa(tlsPort),
		"--tls-cert-file", pki.certFile, "--tls-key-file", pki.keyFile, "--tls-ca-cert-file", pki.caFile,
		"--tls-auth-clients", "no", "--requirepass", password)
	tlsAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(tlsPort))
	ctx := context.Background()

	// Serve TLS only, as with --port 0 (the helper needs the plain port to
	// see the server up).
	admin := redis.NewClient(&redis.Options{Addr: plain, Password: password})
	if err := admin.ConfigSet(ctx, "port", "0").Err(); err != nil {
		t.Fatalf("CONFIG SET port 0: %v", err)
	}
	_ = admin.Close()
	if conn, err := net.DialTimeout("tcp", plain, time.Second); err == nil {
		_ = conn.Close()
		t.Fatal("the plain port still accepts connections")
	}

	tlsConf := &tls.Config{RootCAs: pki.pool, ServerName: "localhost", MinVersion: tls.VersionTLS12}
	rdb := redis.NewClient(&redis.Options{Addr: tlsAddr, TLSConfig: tlsConf, Password: password})
	t.Cleanup(func() { _ = rdb.Close() })
	s := newSaver(t, rdb, redissaver.Options{})
	if err := s.LoadScripts(ctx); err != nil {
		t.Fatalf("LoadScripts over TLS: %v", err)
	}
	roundTrip(t, s)

	// The same URL form users pass: rediss:// with the password.
	opt, err := redis.ParseURL("rediss://:" + password + "@" + tlsAddr)
	if err != nil {
		t.Fatal(err)
	}
	opt.TLSConfig.RootCAs, opt.TLSConfig.ServerName = pki.pool, "localhost"
	byURL := redis.NewClient(opt)
	t.Cleanup(func() { _ = byURL.Close() })
	if _, err := newSaver(t, byURL, redissaver.Options{}).GetTuple(ctx, checkpoint.Config{ThreadID: "secure"}); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("GetTuple through a rediss:// URL on a fresh prefix: %v, want ErrNotFound", err)
	}

	// What must fail does, with a clear error and nothing written.
	for name, o := range map[string]*redis.Options{
		"wrong password":    {Addr: tlsAddr, TLSConfig: tlsConf, Password: "wrong"},
		"no password":       {Addr: tlsAddr, TLSConfig: tlsConf},
		"untrusted CA":      {Addr: tlsAddr, TLSConfig: &tls.Config{ServerName: "localhost", MinVersion: tls.VersionTLS12}, Password: password},
		"plain text on TLS": {Addr: tlsAddr, Password: password},
		"wrong server name": {Addr: tlsAddr, TLSConfig: &tls.Config{RootCAs: pki.pool, ServerName: "redis.example", MinVersion: tls.VersionTLS12}, Password: password},
	} {
		o.MaxRetries, o.DialTimeout, o.ReadTimeout = -1, 2*time.Second, 2*time.Second
		bad := redis.NewClient(o)
		prefix := redistest.Prefix(t)
		_, err := redissaver.New(ctx, bad, redissaver.Options{Prefix: prefix})
		_ = bad.Close()
		if err == nil || errors.Is(err, checkpoint.ErrNotFound) || !strings.HasPrefix(err.Error(), "redissaver: ") {
			t.Errorf("%s: New returned %v, want a wrapped connection or auth error", name, err)
		} else {
			t.Logf("%s: %v", name, err)
		}
		if n := countKeys(t, rdb, prefix); n != 0 {
			t.Errorf("%s: %d keys written", name, n)
		}
	}
}

// TestAuth: with requirepass, a client with the password works and one
// without gets a clear error: NOAUTH, or for a call with many arguments
// (Put) Redis's "Protocol error: unauthenticated multibulk length" (Redis
// refuses long commands from unauthenticated connections).
func TestAuth(t *testing.T) {
	addr := redistest.StartServer(t, "--requirepass", "pw")
	good := redis.NewClient(&redis.Options{Addr: addr, Password: "pw"})
	t.Cleanup(func() { _ = good.Close() })
	roundTrip(t, newSaver(t, good, redissaver.Options{}))

	// New reads the server first: without the password it fails there.
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	prefix := redistest.Prefix(t)
	_, err := redissaver.New(context.Background(), c, redissaver.Options{Prefix: prefix})
	if err == nil || !strings.Contains(err.Error(), "NOAUTH") || !strings.HasPrefix(err.Error(), "redissaver: ") {
		t.Errorf("New without the password: %v, want redissaver: ... NOAUTH ...", err)
	}
	if n := countKeys(t, good, prefix); n != 0 {
		t.Errorf("an unauthenticated client wrote %d keys", n)
	}
}
