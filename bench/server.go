package main

import (
	"fmt"
	"os/exec"

	"github.com/graphstate/redcheck/internal/redisserver"
)

// startRedis starts redis-server on a free loopback port, without
// persistence, in a temporary directory, and waits (at most 10 s) until it
// answers PING; the caller stops it. It is the launcher of the tests
// (internal/redistest), from internal/redisserver, which does not import
// "testing".
func startRedis() (*redisserver.Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL is unset and redis-server is not on PATH (Debian: apt-get install redis-server): %w", err)
	}
	return redisserver.Start(bin, nil)
}
