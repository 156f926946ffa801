package redisserver

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ScriptStats returns the calls of EVALSHA and EVAL Redis has counted and
// the microseconds it spent in them (INFO commandstats); zeros on error.
func ScriptStats(rdb redis.UniversalClient) (calls, usecs int64) {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				calls += n
			case "usec":
				usecs += n
			}
		}
	}
	return calls, usecs
}

// MainThreadCPU returns the CPU seconds Redis's main thread has used (user
// and system, INFO cpu); 0 on error. Unlike wall time, it does not grow
// when other processes compete for the CPU.
func MainThreadCPU(rdb redis.UniversalClient) float64 {
	info, err := rdb.Info(context.Background(), "cpu").Result()
	if err != nil {
		return 0
	}
	var sum float64
	for _, line := range strings.Split(info, "\n") {
		name, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (name == "used_cpu_user_main_thread" || name == "used_cpu_sys_main_thread") {
			f, _ := strconv.ParseFloat(v, 64)
			sum += f
		}
	}
	return sum
}
