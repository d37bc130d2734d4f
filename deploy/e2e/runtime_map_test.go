package e2e

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/svcdev/svc/pkg/service"
)

// TestRuntimeMap: the runtime map at the top of docs/architecture.md is the wiring the services'
// constructors really make (the services each calls, the topics each consumes), and the calls
// between services form no cycle: identity-svc at the bottom, context-svc above it, the rest above
// both.
func TestRuntimeMap(t *testing.T) {
	t.Parallel()
	env := Start(t)
	got := env.Stack.Wiring()
	drawn := drawnWiring(t, "../../docs/architecture.md")
	for name, w := range got {
		d, ok := drawn[name]
		if !ok {
			t.Errorf("%s is missing from the runtime map", name)
			continue
		}
		if !slices.Equal(w.Calls, d.Calls) {
			t.Errorf("%s calls %v; the runtime map says %v", name, w.Calls, d.Calls)
		}
		if !slices.Equal(w.Consumes, d.Consumes) {
			t.Errorf("%s consumes %v; the runtime map says %v", name, w.Consumes, d.Consumes)
		}
	}
	for name := range drawn {
		if _, ok := got[name]; !ok {
			t.Errorf("the runtime map names %s, which the stack does not run", name)
		}
	}
	if t.Failed() {
		t.Logf("the wiring the stack made:\n%s", wiringTable(got))
	}
	if cycle := callCycle(got); cycle != nil {
		t.Errorf("the services call each other in a cycle: %s", strings.Join(cycle, " → "))
	}
}

// drawnWiring reads the runtime map's table: | service | calls | consumes |, each cell a list of
// `names` ("—" for none).
func drawnWiring(t *testing.T, path string) map[string]service.Wiring {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	start := strings.Index(text, "<!-- runtime-map -->")
	end := strings.Index(text, "<!-- /runtime-map -->")
	if start < 0 || end < start {
		t.Fatalf("%s has no <!-- runtime-map --> … <!-- /runtime-map --> section", path)
	}
	names := regexp.MustCompile("`([^`]+)`")
	list := func(cell string) []string {
		out := []string{}
		for _, m := range names.FindAllStringSubmatch(cell, -1) {
			out = append(out, m[1])
		}
		slices.Sort(out)
		return out
	}
	drawn := map[string]service.Wiring{}
	for _, line := range strings.Split(text[start:end], "\n") {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		if len(cells) != 3 || !strings.Contains(cells[0], "`") {
			continue
		}
		name := list(cells[0])
		if len(name) != 1 {
			continue
		}
		drawn[name[0]] = service.Wiring{Calls: list(cells[1]), Consumes: list(cells[2])}
	}
	return drawn
}

// callCycle returns a cycle of synchronous calls, or nil.
func callCycle(w map[string]service.Wiring) []string {
	const (
		unseen = iota
		open
		done
	)
	state := map[string]int{}
	var path []string
	var visit func(string) []string
	visit = func(n string) []string {
		switch state[n] {
		case open:
			i := slices.Index(path, n)
			return append(slices.Clone(path[i:]), n)
		case done:
			return nil
		}
		state[n] = open
		path = append(path, n)
		for _, next := range w[n].Calls {
			if c := visit(next); c != nil {
				return c
			}
		}
		path = path[:len(path)-1]
		state[n] = done
		return nil
	}
	names := make([]string, 0, len(w))
	for n := range w {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if c := visit(n); c != nil {
			return c
		}
	}
	return nil
}

// wiringTable renders wiring as the runtime map's rows, to paste when the map is out of date.
func wiringTable(w map[string]service.Wiring) string {
	cell := func(list []string) string {
		if len(list) == 0 {
			return "—"
		}
		return "`" + strings.Join(list, "`, `") + "`"
	}
	names := make([]string, 0, len(w))
	for n := range w {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString("| `" + n + "` | " + cell(w[n].Calls) + " | " + cell(w[n].Consumes) + " |\n")
	}
	return b.String()
}
