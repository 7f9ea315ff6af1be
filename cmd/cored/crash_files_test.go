package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	driver "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestAcknowledgedUploadsSurviveKill: 20 uploaders post files to a real
// cored process, which is killed (SIGKILL) while they upload; after a
// restart on the same data every upload that was acknowledged (201)
// downloads with its checksum, and, on both stores, no content remains
// that no File record names (the sweep at start removed the uploads the
// kill cut short).
func TestAcknowledgedUploadsSurviveKill(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	for name, store := range crashStores(t, data) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"--admin-token", crashAdmin}, store...)
			p := startCoredArgs(t, args...)
			token := newNotesInstance(t, p, nil)
			// 20 uploaders of 64 KiB files; the process is killed once 60
			// uploads are acknowledged, while the others are under way.
			var mu sync.Mutex
			acked := map[string]string{} // url.path → sha256
			untilKilled(p, 20, 60, func(w, i int) (answered, ack bool) {
				content := bytes.Repeat([]byte(fmt.Sprintf("uploader %d file %d. ", w, i)), 3000)
				path, sum, ok := tryUpload(p, token, content)
				if ok && path != "" {
					mu.Lock()
					acked[path] = sum
					mu.Unlock()
				}
				return ok, path != ""
			})

			// The start's sweep on MongoDB removes only what is older than
			// --file-sweep-age, since other processes may be uploading; here
			// none is, so the restart sweeps everything, as the embedded
			// store's always does. GridFS chunks tell their time in whole
			// seconds: the restart comes in a later second than the kill, so
			// that "older than now" covers the last chunk written.
			killed := time.Now().Truncate(time.Second)
			for deadline := killed.Add(time.Minute); !time.Now().Truncate(time.Second).After(killed) && time.Now().Before(deadline); {
				runtime.Gosched()
			}
			q := startCoredArgs(t, append(args, "--file-sweep-age", "0s")...)
			mu.Lock()
			defer mu.Unlock()
			bad := 0
			for path, sum := range acked {
				req, _ := http.NewRequest("GET", "http://"+q.addr+path, nil)
				req.Header.Set("authorization", token)
				res, err := crashClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				got := sha256.New()
				_, _ = io.Copy(got, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 || hex.EncodeToString(got.Sum(nil)) != sum {
					bad++
				}
			}
			if bad > 0 {
				t.Errorf("%d of %d acknowledged uploads do not download with their checksum after the kill and restart", bad, len(acked))
			}
			// Every content left is an acknowledged upload's or one whose
			// record committed as the process died.
			_, out, _ := tryCall(q, map[string]string{"core-domain": "crash.test", "authorization": token},
				map[string]any{"query": `{ find(type: File, arcql: "*", first: 1000) { edges { node { ... on File { core { id } } } } } }`})
			edges := out["data"].(map[string]any)["find"].(map[string]any)["edges"].([]any)
			records := map[string]bool{}
			for _, e := range edges {
				records[e.(map[string]any)["node"].(map[string]any)["core"].(map[string]any)["id"].(string)] = true
			}
			var orphans []string
			for _, c := range keptContents(t, data, store) {
				if !records[c] {
					orphans = append(orphans, c)
				}
			}
			if len(orphans) > 0 || len(records) < len(acked) {
				t.Errorf("after the restart's sweep: %d records (%d acknowledged), orphan contents %v", len(records), len(acked), orphans)
			}
			t.Logf("%d uploads acknowledged before the kill", len(acked))
		})
	}
}

// tryUpload posts one file; ok is false when the process did not answer.
func tryUpload(p *coredProcess, token string, content []byte) (path, sum string, ok bool) {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	fw, _ := w.CreateFormFile("0", "f.txt")
	fw.Write(content)
	w.Close()
	req, err := http.NewRequest("POST", "http://"+p.addr+"/upload/crash", &b)
	if err != nil {
		return "", "", false
	}
	req.Header.Set("content-type", w.FormDataContentType())
	req.Header.Set("core-domain", "crash.test")
	req.Header.Set("authorization", token)
	res, err := crashClient.Do(req)
	if err != nil {
		return "", "", false
	}
	defer res.Body.Close()
	var recs []map[string]any
	if err := json.NewDecoder(res.Body).Decode(&recs); err != nil || res.StatusCode != 201 || len(recs) != 1 {
		return "", "", err == nil || res.StatusCode != 201
	}
	s := sha256.Sum256(content)
	if recs[0]["sha256"] != hex.EncodeToString(s[:]) {
		return "", "", true
	}
	return recs[0]["url"].(map[string]any)["path"].(string), recs[0]["sha256"].(string), true
}

// keptContents names every content a store keeps after the test's
// uploads: on the embedded store the files under data/files (partial
// ones too); on MongoDB the GridFS files, and "chunks of X" for chunks
// of a file X that has no file document.
func keptContents(t *testing.T, data string, storeArgs []string) []string {
	t.Helper()
	var kept []string
	if !slices.Contains(storeArgs, "--mongo-uri") {
		_ = filepath.WalkDir(filepath.Join(data, "files"), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				kept = append(kept, d.Name())
			}
			return nil
		})
		return kept
	}
	u, err := url.Parse(storeArgs[slices.Index(storeArgs, "--mongo-uri")+1])
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	client, err := driver.Connect(options.Client().ApplyURI(u.String()))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Disconnect(context.Background()) //nolint:errcheck // read only
	db := client.Database(strings.TrimPrefix(u.Path, "/"))
	var files []struct {
		ID string `bson:"_id"`
	}
	cur, err := db.Collection("files.files").Find(ctx, bson.D{})
	if err == nil {
		err = cur.All(ctx, &files)
	}
	if err != nil {
		t.Fatalf("listing GridFS files: %v", err)
	}
	named := map[string]bool{}
	for _, f := range files {
		named[f.ID] = true
		_, id, _ := strings.Cut(f.ID, ":")
		kept = append(kept, id)
	}
	var chunks []struct {
		FileID string `bson:"files_id"`
	}
	cur, err = db.Collection("files.chunks").Find(ctx, bson.D{}, options.Find().SetProjection(bson.D{{Key: "files_id", Value: 1}}))
	if err == nil {
		err = cur.All(ctx, &chunks)
	}
	if err != nil {
		t.Fatalf("listing GridFS chunks: %v", err)
	}
	for _, c := range chunks {
		if !named[c.FileID] {
			named[c.FileID] = true // once
			kept = append(kept, "chunks of "+c.FileID)
		}
	}
	return kept
}
