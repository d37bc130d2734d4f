package chart

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// valuesRow is one row of docs/operations.md's "Chart values" table: the keys its first cell
// names (shorthands such as "`secret.mongoURI`, `kafkaBrokers`" expanded to full paths, a
// service's name written <name>) and its default cell.
type valuesRow struct {
	keys []string
	def  string
}

var backticked = regexp.MustCompile("`([^`]+)`")

// documentedValues reads the "Chart values" table of docs/operations.md.
func documentedValues(t *testing.T) []valuesRow {
	t.Helper()
	raw, err := os.ReadFile(operationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i := strings.Index(doc, "### Chart values")
	if i < 0 {
		t.Fatal("docs/operations.md has no Chart values table")
	}
	var rows []valuesRow
	for _, line := range strings.Split(doc[i:], "\n")[1:] {
		if strings.HasPrefix(line, "#") {
			break
		}
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `") || len(cells) < 3 {
			continue
		}
		var keys []string
		parent := ""
		for _, m := range backticked.FindAllStringSubmatch(cells[0], -1) {
			key := m[1]
			if strings.Contains(key, ".") {
				parent = key[:strings.LastIndex(key, ".")+1]
			} else if parent != "" {
				key = parent + key
			}
			keys = append(keys, key)
		}
		rows = append(rows, valuesRow{keys: keys, def: cells[1]})
	}
	if len(rows) < 20 {
		t.Fatalf("docs/operations.md's Chart values table has %d rows, want the chart's values", len(rows))
	}
	return rows
}

// chartValues are values.yaml's leaves by path, with each service's settings under
// services.<name> (one path for all services, holding each service's value in the order of
// services, sorted by name).
func chartValues(t *testing.T) (leaves map[string][]any, services []string) {
	t.Helper()
	raw, err := os.ReadFile("../helm/svc/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatal(err)
	}
	leaves = map[string][]any{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		if m, ok := v.(map[string]any); ok && len(m) > 0 && path != "services.<name>.env" && !strings.HasSuffix(path, ".resources") {
			for k, sub := range m {
				walk(path+"."+k, sub)
			}
			return
		}
		leaves[path] = append(leaves[path], v)
	}
	for k, v := range values {
		if k != "services" {
			walk(k, v)
		}
	}
	byName := values["services"].(map[string]any)
	for name := range byName {
		services = append(services, name)
	}
	slices.Sort(services) // leaves of services.<name> hold one value per service, in this order
	for _, name := range services {
		for k, sub := range byName[name].(map[string]any) {
			walk("services.<name>."+k, sub)
		}
	}
	return leaves, services
}

// covers reports whether the documented key doc covers the values path: the same key, or a key
// above it (probes.readiness covers probes.readiness.periodSeconds).
func covers(doc, path string) bool { return doc == path || strings.HasPrefix(path, doc+".") }

// TestChartValuesTable: the "Chart values" table of docs/operations.md documents every key of
// values.yaml and no key the chart lacks, and the defaults it states as one value are the
// values.yaml defaults, so that an operator reading the table reads the chart.
func TestChartValuesTable(t *testing.T) {
	rows := documentedValues(t)
	leaves, services := chartValues(t)
	// Keys the chart takes but does not set by default (values.schema.json admits them).
	optional := []string{"services.<name>.image", "services.<name>.autoscaling.behavior"}

	var documented []string
	for _, r := range rows {
		documented = append(documented, r.keys...)
	}
	for path := range leaves {
		if !slices.ContainsFunc(documented, func(d string) bool { return covers(d, path) }) {
			t.Errorf("values.yaml's %s is not in docs/operations.md's Chart values table", path)
		}
	}
	for _, d := range documented {
		known := slices.Contains(optional, d)
		for path := range leaves {
			known = known || covers(d, path) || covers(path, d)
		}
		if !known {
			t.Errorf("docs/operations.md's Chart values table documents %s, which values.yaml lacks", d)
		}
	}

	// A default cell that is one value in backticks states the default of each key of its row.
	for _, r := range rows {
		m := backticked.FindAllStringSubmatch(r.def, -1)
		if len(m) != 1 || strings.TrimSpace(r.def) != m[0][0] {
			continue
		}
		for _, key := range r.keys {
			for _, v := range leaves[key] {
				if got := fmt.Sprint(v); got != m[0][1] && !(m[0][1] == "[]" && got == "[]") {
					t.Errorf("docs/operations.md gives %s the default %s; values.yaml has %s", key, m[0][1], got)
				}
			}
		}
	}

	// Which services autoscale by default is prose in its cell: the services it names before
	// the first ";" are those whose autoscaling.enabled is true.
	var autoscaled []string
	for i, name := range services {
		if leaves["services.<name>.autoscaling.enabled"][i] == true {
			autoscaled = append(autoscaled, name)
		}
	}
	for _, r := range rows {
		if !slices.Contains(r.keys, "services.<name>.autoscaling") {
			continue
		}
		cell, _, _ := strings.Cut(r.def, ";")
		var named []string
		for _, name := range services {
			if strings.Contains(cell, name) {
				named = append(named, name)
			}
		}
		if !slices.Equal(named, autoscaled) {
			t.Errorf("docs/operations.md says autoscaling is on for %v; values.yaml turns it on for %v", named, autoscaled)
		}
	}
}

// TestRenderWithoutClusterPins: two renders without a cluster (which cannot read the Secret back)
// generate some of the Secret's values anew; docs/operations.md names the key of each of them to
// pin for such renders, so that no render replaces a key, and the signing keys secret least of all.
func TestRenderWithoutClusterPins(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(operationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i := strings.Index(doc, "Tools that render the chart without a cluster")
	if i < 0 {
		t.Fatal("docs/operations.md does not say what to pin when rendering without a cluster")
	}
	para, _, _ := strings.Cut(doc[i:], "\n\n")
	// The value of secret.<key> that each variable of the Secret comes from.
	keyOf := map[string]string{"GATEWAY_JWT_KEY": "gatewayJWTKey", "GATEWAY_JWT_PUBLIC_KEY": "gatewayJWTPublicKey",
		"SERVICE_JWT_KEY": "serviceJWTKey", "PAYMENT_VOUCHER_SECRET": "paymentVoucherSecret", "SIGNING_KEYS_SECRET": "signingKeysSecret"}
	first, second := mustRender(t, secretValues()), mustRender(t, secretValues())
	regenerated := 0
	for name, v := range first.secrets[0].Data {
		if string(second.secrets[0].Data[name]) == string(v) {
			continue
		}
		regenerated++
		key, ok := keyOf[name]
		if !ok {
			t.Errorf("two renders give %s two values, and this test knows no key that pins it", name)
			continue
		}
		if !strings.Contains(para, "`secret."+key+"`") {
			t.Errorf("two renders give %s two values, and docs/operations.md does not say to pin secret.%s", name, key)
		}
	}
	if regenerated != len(keyOf) {
		t.Errorf("two renders regenerated %d of the Secret's values, want the %d this test knows", regenerated, len(keyOf))
	}
}
