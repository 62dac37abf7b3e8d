// tlog-check: an independent check of Ebb's transparency log with the Go reference code
// (golang.org/x/mod/sumdb/note and sumdb/tlog, as Debian packages them): both checkpoints are
// signed by the verifier key, and the newer tree contains the older one (RFC 6962 consistency
// proof from the log's C2SP tiles). Exit 0: consistent; 1: not (rolled back, forked).
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go run scripts/tlog-check/main.go URL VKEY OLD NEW
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

type tiles struct{ base string }

func (t tiles) Height() int { return 8 }

// C2SP paths name no height: tile/8/L/N becomes tile/L/N.
func (t tiles) ReadTiles(ts []tlog.Tile) ([][]byte, error) {
	var out [][]byte
	for _, tile := range ts {
		path := strings.Replace(tile.Path(), "tile/8/", "tile/", 1)
		resp, err := http.Get(t.base + "/audit/" + path)
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			return nil, fmt.Errorf("%s: %v %s", path, err, resp.Status)
		}
		out = append(out, data)
	}
	return out, nil
}

func (t tiles) SaveTiles([]tlog.Tile, [][]byte) {}

func fail(format string, args ...interface{}) {
	fmt.Printf("BROKEN: "+format+"\n", args...)
	os.Exit(1)
}

func open(file, vkey string) (int64, tlog.Hash) {
	msg, err := os.ReadFile(file)
	if err != nil {
		fail("%v", err)
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		fail("verifier key: %v", err)
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		fail("%s: %v", file, err)
	}
	lines := strings.Split(n.Text, "\n")
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil {
		fail("%s: size: %v", file, err)
	}
	hash, err := tlog.ParseHash(lines[2])
	if err != nil {
		fail("%s: root: %v", file, err)
	}
	return size, hash
}

func main() {
	base, vkey := strings.TrimRight(os.Args[1], "/"), os.Args[2]
	oldSize, oldHash := open(os.Args[3], vkey)
	newSize, newHash := open(os.Args[4], vkey)
	if newSize < oldSize {
		fail("rolled back: %d entries, then %d", oldSize, newSize)
	}
	r := tlog.TileHashReader(tlog.Tree{N: newSize, Hash: newHash}, tiles{base})
	proof, err := tlog.ProveTree(newSize, oldSize, r)
	if err != nil {
		fail("forked: no proof that %d entries contain %d (%v)", newSize, oldSize, err)
	}
	if err := tlog.CheckTree(proof, newSize, newHash, oldSize, oldHash); err != nil {
		fail("forked: the tree of %d entries does not contain the tree of %d (%v)", newSize, oldSize, err)
	}
	fmt.Printf("consistent: %d -> %d\n", oldSize, newSize)
}
