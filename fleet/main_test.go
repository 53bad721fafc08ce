package fleet_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"purra.dev/purramcp/oauth"
)

// stdioServer is examples/stdio-server, built once by TestMain.
var stdioServer string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "fleet-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet tests: temporary directory:", err)
		os.Exit(2)
	}
	// No test reads or writes the user's token store.
	if err := os.Setenv(oauth.DirEnv, filepath.Join(dir, "tokens")); err != nil {
		fmt.Fprintln(os.Stderr, "fleet tests: setting", oauth.DirEnv+":", err)
		_ = os.RemoveAll(dir)
		os.Exit(2)
	}
	stdioServer = filepath.Join(dir, "stdio-server")
	build := exec.Command("go", "build", "-o", stdioServer, "purra.dev/purramcp/examples/stdio-server")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "fleet tests: building examples/stdio-server:", err)
		_ = os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "fleet tests: goroutines left:", err)
			code = 1
		}
	}
	os.Exit(code)
}
