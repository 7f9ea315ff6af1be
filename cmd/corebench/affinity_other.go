//go:build !linux

package main

import (
	"errors"
	"os/exec"
)

var errNoAffinity = errors.New("CPU pinning needs Linux")

func allowedCPUs() ([]int, error) { return nil, errNoAffinity }

func pinSelf([]int) error { return errNoAffinity }

func dieWithUs(*exec.Cmd) {}
