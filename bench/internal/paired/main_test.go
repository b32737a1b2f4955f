package main

import (
	"bufio"
	"strings"
	"testing"
)

func TestAnswerIsRead(t *testing.T) {
	w := &worker{out: bufio.NewReader(strings.NewReader("cpu-ns=1000 robust-ns=990 gc-ns=50 wall-ns=900 alloc-B=2048\n"))}
	r, err := w.answer()
	if err != nil {
		t.Fatal(err)
	}
	if r != (burst{cpu: 990, sum: 1000, gc: 50, wall: 900, alloc: 2048}) {
		t.Errorf("an answer read as %+v", r)
	}
}

func TestBadAnswersAreErrors(t *testing.T) {
	for _, line := range []string{
		"cpu-ns=abc robust-ns=1 gc-ns=1 wall-ns=1 alloc-B=1\n",
		"PASS\n",
		"", // the worker died
	} {
		w := &worker{out: bufio.NewReader(strings.NewReader(line))}
		if _, err := w.answer(); err == nil {
			t.Errorf("%q read without an error", line)
		}
	}
}
