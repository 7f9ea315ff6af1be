package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestFloorServes: `corebench floor` answers GET /floor/{id} with the id
// and stops when its context ends.
func TestFloorServes(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	out, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- runFloorCmd(ctx, []string{"-addr", "127.0.0.1:0"}, w, io.Discard)
		w.Close()
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("no address line: %v", err)
	}
	go io.Copy(io.Discard, out)
	url := strings.Replace(strings.Fields(line)[2], "{id}", "b-42", 1)
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != `{"id":"b-42"}` {
		t.Errorf("GET %s = %d %s, want 200 {\"id\":\"b-42\"}", url, res.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("floor after its context ended: %v", err)
	}
}
