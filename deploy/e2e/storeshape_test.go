package e2e

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestShapeGuardJudgesFilters: the guard passes what the _id index serves and refuses the rest.
func TestShapeGuardJudgesFilters(t *testing.T) {
	t.Parallel()
	raw := func(d bson.D) bson.Raw {
		if d == nil {
			return nil
		}
		b, err := bson.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	byID := bson.D{{Key: "_id", Value: 1}}
	for _, c := range []struct {
		name         string
		filter, sort bson.D
		served       bool
	}{
		{"_id equality", bson.D{{Key: "_id", Value: "a"}}, nil, true},
		{"_id equality and a condition", bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: bson.D{{Key: "$lt", Value: 3}}}}, nil, true},
		{"_id $in", bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{"a", "b"}}}}}, nil, true},
		{"_id range sorted by _id", bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: "a|"}, {Key: "$lt", Value: "a}"}}}}, byID, true},
		{"_id range unsorted", bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: "a|"}}}}, nil, true},
		{"_id range sorted by another field", bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: "a|"}}}}, bson.D{{Key: "at", Value: 1}}, false},
		{"_id range and another condition", bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: "a|"}}}, {Key: "kind", Value: "x"}}, byID, false},
		{"_id regex", bson.D{{Key: "_id", Value: bson.D{{Key: "$regex", Value: "^a"}}}}, nil, false},
		{"another field", bson.D{{Key: "status", Value: "pending"}}, nil, false},
		{"everything", bson.D{}, nil, false},
		{"no filter", nil, nil, false},
	} {
		if _, ok := servedByID(raw(c.filter), raw(c.sort)); ok != c.served {
			t.Errorf("%s: served %v, want %v", c.name, ok, c.served)
		}
	}
}
