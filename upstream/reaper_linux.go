package upstream

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
)

// descendants returns every live descendant of the members of process group
// pgid's leader (pid pgid), with its start time, from /proc's children
// lists: a walk of the tree, not a scan of every process.
func descendants(pgid int) map[int]uint64 {
	out := map[int]uint64{}
	queue := []int{pgid}
	for len(queue) > 0 && len(out) < 4096 {
		pid := queue[0]
		queue = queue[1:]
		tasks, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/children")
		for _, f := range tasks {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for _, field := range bytes.Fields(b) {
				child, err := strconv.Atoi(string(field))
				if err != nil || out[child] != 0 {
					continue
				}
				if st, ok := startTime(child); ok {
					out[child] = st
					queue = append(queue, child)
				}
			}
		}
	}
	return out
}

// statFields returns the fields of /proc/PID/stat after the command name
// (state is [0], ppid [1], pgrp [2], starttime [19]).
func statFields(pid int) [][]byte {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 > len(b) {
		return nil
	}
	return bytes.Fields(b[i+2:])
}

// startTime returns when pid started (clock ticks since boot), which tells
// a process from a later one that reused its PID; false if pid is gone or a
// zombie.
func startTime(pid int) (uint64, bool) {
	f := statFields(pid)
	if len(f) < 20 || string(f[0]) == "Z" {
		return 0, false
	}
	st, err := strconv.ParseUint(string(f[19]), 10, 64)
	return st, err == nil && st != 0
}

// processGroup returns pid's process group, 0 if unknown.
func processGroup(pid int) int {
	f := statFields(pid)
	if len(f) < 3 {
		return 0
	}
	g, _ := strconv.Atoi(string(f[2]))
	return g
}
