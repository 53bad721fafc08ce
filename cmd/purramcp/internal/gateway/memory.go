package gateway

import (
	"bufio"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// callBudget is the memory one call in flight may hold: its argument text
// (at most the HTTP body cap, 1 MiB) and its result while it is checked
// (purramcp bounds a structured result at 1 MiB).
const callBudget = 2 << 20

// Bounds of [DefaultMaxCalls].
const (
	minDefaultCalls = 64
	maxDefaultCalls = 4096
)

// DefaultMaxCalls is the default of [Options].MaxCalls: a quarter of the
// memory the process may use (GOMEMLIMIT when set and lower, else the
// machine's, read from /proc/meminfo) over the 2 MiB one call in flight may
// hold, between 64 and 4096. The other three quarters are left to the
// sessions (about 65 KB each), the upstream clients and the garbage
// collector's headroom. Where the machine's memory cannot be read it is 64.
func DefaultMaxCalls() int { return callsFor(memoryBytes()) }

// callsFor is DefaultMaxCalls for mem bytes of memory.
func callsFor(mem uint64) int {
	return int(min(max(mem/4/callBudget, minDefaultCalls), maxDefaultCalls))
}

// memoryBytes is the memory the process may use: the lower of the Go
// memory limit and the machine's total memory; 0 when neither is known.
func memoryBytes() uint64 {
	mem := machineMemory()
	if limit := debug.SetMemoryLimit(-1); limit > 0 && limit < math.MaxInt64 && (mem == 0 || uint64(limit) < mem) {
		mem = uint64(limit)
	}
	return mem
}

// machineMemory is MemTotal from /proc/meminfo in bytes, 0 when unknown.
func machineMemory() uint64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}
