package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestShown(t *testing.T) {
	assert.Equal(t, "units.list", shown("units.list"))
	assert.Equal(t, `"a\x1b[2Jb"`, shown("a\x1b[2Jb"))
	assert.Equal(t, `" padded"`, shown(" padded"))
	assert.Equal(t, `""`, shown(""))
	assert.Equal(t, `"caf\u00e9\u200b"`, shown("café\u200b"))
	long := strings.Repeat("a", 300)
	assert.Equal(t, `"`+strings.Repeat("a", maxShown)+`..."`, shown(long))
}

func TestPaint(t *testing.T) {
	assert.Equal(t, "ok", paint(false, green, "ok"))
	assert.Equal(t, "\x1b[32mok\x1b[0m", paint(true, green, "ok"))
}

func TestStreams_NoColourOffTerminal(t *testing.T) {
	// Test runs write to buffers: nothing they print carries an escape.
	dir := lockedDir(t)
	writeConfig(t, dir, map[string]server{"units": {args: []string{"-list-description", "x"}, tools: unitsTools}})
	r := runIn(t, dir, "lock", "--check", "--config", "$DIR/purramcp.json", "--lock", "$DIR/purramcp-lock.json")
	assert.Equal(t, exitFail, r.code)
	assert.NotContains(t, r.stdout+r.stderr, "\x1b")
	var out bytes.Buffer
	writeDiffs(&out, true, []serverDiff{{ID: "a", Status: statusChanged, Changes: []toolChange{{Tool: "t", RemoteName: "r", Kind: "removed"}}}}, "o", "n")
	assert.Equal(t, "a: changed - -> -\n  \x1b[31m- t (r)\x1b[0m\n", out.String())
}
