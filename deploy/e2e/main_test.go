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
	// The run fails when a service sent a query its store cannot serve from the _id index.
	testkit.Main(m, reportShapes)
}
