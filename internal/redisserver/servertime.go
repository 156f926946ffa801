package redisserver

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// CommandStat is one command's line of INFO commandstats.
type CommandStat struct {
	Calls, Usecs int64
}

// CommandStats returns INFO commandstats by command name ("evalsha",
// "get", "config|resetstat"). Commands a script runs through redis.call
// are counted under their own names as well as inside the script's time,
// so a sum over every name counts them twice: sum the names a client sent.
func CommandStats(rdb redis.UniversalClient) (map[string]CommandStat, error) {
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		return nil, err
	}
	out := map[string]CommandStat{}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd {
			continue
		}
		var st CommandStat
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				st.Calls = n
			case "usec":
				st.Usecs = n
			}
		}
		out[name] = st
	}
	return out, nil
}

// ScriptStats returns the calls of EVALSHA and EVAL Redis has counted and
// the microseconds it spent in them (INFO commandstats); zeros on error.
func ScriptStats(rdb redis.UniversalClient) (calls, usecs int64) {
	stats, err := CommandStats(rdb)
	if err != nil {
		return 0, 0
	}
	for _, name := range []string{"evalsha", "eval"} {
		calls += stats[name].Calls
		usecs += stats[name].Usecs
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
