package e2e

import (
	"os"
	"testing"

	"github.com/svcdev/svc/pkg/testkit"
)

func TestMain(m *testing.M) {
	if raw := os.Getenv(childEnv); raw != "" {
		runChild(raw) // a suite that a test runs in a process of its own, to kill it
	}
	testkit.Main(m)
}
