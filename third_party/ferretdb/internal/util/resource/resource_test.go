// Copyright 2021 FerretDB Inc.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package resource

import (
	"runtime/pprof"
	"testing"

	"github.com/FerretDB/FerretDB/internal/util/debugbuild"
)

type tracked struct {
	token *Token
}

// TestTrackOnlyInDebugBuilds: a debug build (-race or the ferretdb_debug tag) counts a tracked
// object in its profile until it is untracked; a release build keeps no profile, so tracking
// costs nothing and an object dropped without Untrack is no panic for its finalizer.
func TestTrackOnlyInDebugBuilds(t *testing.T) {
	obj := &tracked{token: NewToken()}
	Track(obj, obj.token)

	p := pprof.Lookup(profileName(obj))
	if !debugbuild.Enabled {
		if p != nil {
			t.Fatalf("a release build tracks %s in a profile (%d objects)", profileName(obj), p.Count())
		}

		Untrack(obj, obj.token) // no profile to remove it from: no panic either

		return
	}

	if p == nil || p.Count() != 1 {
		t.Fatalf("a debug build does not count the tracked object (profile %v)", p)
	}

	Untrack(obj, obj.token)

	if p.Count() != 0 {
		t.Fatalf("the untracked object is still counted (%d)", p.Count())
	}
}
