package purramcp_test

import (
	"fmt"
	"os"
	"testing"
)

// packageTempDir holds what the package's tests build once (the stdio child
// server); TestMain removes it after every test has run.
var packageTempDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "purramcp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "purramcp tests: temporary directory:", err)
		os.Exit(2)
	}
	packageTempDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}
