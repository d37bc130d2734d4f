package e2e

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/format/pktline"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
)

// TestContextSyncRefusesAPackThatInflates serves, over https smart HTTP, a pack of a few hundred
// KiB whose llm.txt is 128 MiB of zeros. The pull is refused with a 4xx before the blob is
// inflated, and the heap of the process running the suite stays flat. Not parallel: the heap is
// measured, so no other test may run beside it.
func TestContextSyncRefusesAPackThatInflates(t *testing.T) {
	const blobSize = 128 << 20
	pack, head := zeroBombPack(t, blobSize)
	srv := httptest.NewTLSServer(rawSmartGit(head, pack))
	defer srv.Close()
	caFile := caFileOf(t, srv)
	env := Start(t, WithEnv(allowPrivate, "true"), WithEnv("OUTBOUND_CA_FILE", caFile))
	hash, key := env.CreateObject(t, nil)
	base := "/api/objects/" + hash
	env.Do(t, "PUT", base+"/sync", key, map[string]any{"repo_url": srv.URL + "/profile.git"}).Expect(t, 200)

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	resp := env.Do(t, "POST", base+"/sync", key, nil)
	close(done)
	<-sampled
	if resp.Status < 400 || resp.Status >= 500 {
		t.Errorf("pulling a pack that inflates to %d bytes answered %d %s, want a 4xx", blobSize, resp.Status, resp.Body)
	}
	growth := int64(peak.Load()) - int64(before.HeapAlloc)
	t.Logf("heap growth during the pull: %d MiB", growth>>20)
	if growth > 64<<20 {
		t.Errorf("the heap grew by %d MiB during the pull, want under 64 MiB", growth>>20)
	}
	if v := Num(t, env.Do(t, "GET", base, "", nil).JSON(t), "version"); v != 1 {
		t.Errorf("a refused pull moved the version to %v", v)
	}
}

// zeroBombPack builds a pack of one commit whose tree holds llm.txt: size bytes of zeros,
// compressed to a few hundred KiB. It returns the pack and the commit's hash.
func zeroBombPack(t *testing.T, size int) ([]byte, plumbing.Hash) {
	t.Helper()
	blob := plumbing.NewHasher(plumbing.BlobObject, int64(size))
	var zblob bytes.Buffer
	zw := zlib.NewWriter(&zblob)
	chunk := make([]byte, 1<<20)
	for written := 0; written < size; written += len(chunk) {
		_, _ = blob.Write(chunk)
		_, _ = zw.Write(chunk)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	blobHash := blob.Sum()
	tree := append([]byte("100644 llm.txt\x00"), blobHash[:]...)
	treeHash := plumbing.ComputeHash(plumbing.TreeObject, tree)
	commit := []byte(fmt.Sprintf("tree %s\nauthor Ada <ada@example.com> 1700000000 +0000\ncommitter Ada <ada@example.com> 1700000000 +0000\n\nprofile\n", treeHash))
	commitHash := plumbing.ComputeHash(plumbing.CommitObject, commit)

	var pack bytes.Buffer
	pack.WriteString("PACK")
	_ = binary.Write(&pack, binary.BigEndian, uint32(2))
	_ = binary.Write(&pack, binary.BigEndian, uint32(3))
	writeObject := func(typ plumbing.ObjectType, size int, compressed []byte) {
		b := byte(typ)<<4 | byte(size&0x0f)
		size >>= 4
		for size > 0 {
			pack.WriteByte(b | 0x80)
			b = byte(size & 0x7f)
			size >>= 7
		}
		pack.WriteByte(b)
		pack.Write(compressed)
	}
	deflate := func(p []byte) []byte {
		var z bytes.Buffer
		w := zlib.NewWriter(&z)
		_, _ = w.Write(p)
		_ = w.Close()
		return z.Bytes()
	}
	writeObject(plumbing.CommitObject, len(commit), deflate(commit))
	writeObject(plumbing.TreeObject, len(tree), deflate(tree))
	writeObject(plumbing.BlobObject, size, zblob.Bytes())
	sum := sha1.Sum(pack.Bytes())
	pack.Write(sum[:])
	t.Logf("pack of %d KiB holding a blob of %d MiB", pack.Len()>>10, size>>20)
	return pack.Bytes(), commitHash
}

// rawSmartGit serves one branch, main at head, and answers every fetch with pack as it is.
func rawSmartGit(head plumbing.Hash, pack []byte) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /profile.git/info/refs", func(w http.ResponseWriter, _ *http.Request) {
		adv := packp.NewAdvRefs()
		_ = adv.AddReference(plumbing.NewHashReference(plumbing.NewBranchReferenceName("main"), head))
		adv.Prefix = [][]byte{[]byte("# service=git-upload-pack"), pktline.Flush}
		w.Header().Set("Content-Type", "application/x-git-upload-pack-advertisement")
		_ = adv.Encode(w)
	})
	mux.HandleFunc("POST /profile.git/git-upload-pack", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-git-upload-pack-result")
		_ = pktline.NewEncoder(w).EncodeString("NAK\n")
		_, _ = w.Write(pack)
	})
	return mux
}

// caFileOf writes the certificate of a TLS test server to a file, for OUTBOUND_CA_FILE.
func caFileOf(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return caFile
}
