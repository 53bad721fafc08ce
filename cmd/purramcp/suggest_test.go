package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLocalName(t *testing.T) {
	used := map[string]bool{"units_list": true}
	assert.Equal(t, "units_list_2", localName("units.list", used))
	assert.Equal(t, "units_list_3", localName("units-list", used))
	assert.Equal(t, "_2fa_check", localName("2fa.check", used))
	long := strings.Repeat("x", 100)
	assert.Equal(t, strings.Repeat("x", 64), localName(long, used))
	assert.Equal(t, strings.Repeat("x", 62)+"_2", localName(long, used))
	for name := range used {
		assert.Regexp(t, `^[A-Za-z_][A-Za-z0-9_]{0,63}$`, name)
	}
}
