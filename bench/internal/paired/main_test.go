package main

import (
	"bufio"
	"strings"
	"testing"
)

func TestAnswerIsRead(t *testing.T) {
	w := &worker{out: bufio.NewReader(strings.NewReader(
		"cpu-ns=1000 gc-ns=50 wall-ns=900 alloc-B=2048\ncalls=7 cpu-ns=700 gc-ns=5 wall-ns=1000 alloc-B=10\n"))}
	r, err := w.answer(false)
	if err != nil {
		t.Fatal(err)
	}
	if r != (burst{cpu: 1000, gc: 50, wall: 900, alloc: 2048}) {
		t.Errorf("a run answer read as %+v", r)
	}
	r, err = w.answer(true)
	if err != nil {
		t.Fatal(err)
	}
	if r != (burst{calls: 7, cpu: 700, gc: 5, wall: 1000, alloc: 10}) {
		t.Errorf("a for answer read as %+v", r)
	}
}

func TestBadAnswersAreErrors(t *testing.T) {
	for _, tc := range []struct {
		line      string
		withCalls bool
	}{
		{"cpu-ns=abc gc-ns=1 wall-ns=1 alloc-B=1\n", false},
		{"PASS\n", false},
		{"cpu-ns=1 gc-ns=1 wall-ns=1 alloc-B=1\n", true}, // no count of calls
		{"calls=0 cpu-ns=1 gc-ns=1 wall-ns=1 alloc-B=1\n", true},
		{"", false}, // the worker died
	} {
		w := &worker{out: bufio.NewReader(strings.NewReader(tc.line))}
		if _, err := w.answer(tc.withCalls); err == nil {
			t.Errorf("%q (withCalls %v) read without an error", tc.line, tc.withCalls)
		}
	}
}
