package sanity

import (
	"context"
	"fmt"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// Concurrency rules: a CO may send the same or different requests at once;
// the driver answers OK or ABORTED (retry later), never INTERNAL or UNKNOWN,
// and loses no update.

// concurrentCodes are the answers a driver may give to concurrent requests.
var concurrentCodes = []string{"OK", "Aborted"}

// fanOut sends one request per block at once and returns each answer.
func fanOut(ctx context.Context, blocks []string, send func(ctx context.Context, b string) error) []error {
	errs := make([]error, len(blocks))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, b := range blocks {
		wg.Add(1)
		go func() {
			defer GinkgoRecover()
			defer wg.Done()
			<-start
			errs[i] = send(ctx, b)
		}()
	}
	close(start)
	wg.Wait()
	return errs
}

func expectConcurrentCodes(errs []error, what string, blocks []string) {
	GinkgoHelper()
	for i, err := range errs {
		Expect(concurrentCodes).To(ContainElement(codeName(err)), "%s of %s: expected OK or ABORTED, got %s: %s", what, blocks[i], codeName(err), errMessage(err))
	}
}

func describeConcurrency(s *State) {
	Context("concurrency", func() {
		s.it("CONC-001", func(ctx context.Context) {
			s.needList()
			b := s.v4(1, 32)[0]
			same := make([]string, s.cfg.Concurrency)
			for i := range same {
				same[i] = b
			}
			errs := fanOut(ctx, same, func(ctx context.Context, b string) error { return s.fence(ctx, []string{b}) })
			expectConcurrentCodes(errs, "concurrent FenceClusterNetwork", same)
			listed, err := s.observed(ctx)
			expectOK(err, "ListClusterFence")
			want := 1
			if codeName(firstOK(errs)) != "OK" {
				want = 0
			}
			Expect(countCanonical(listed, b)).To(Equal(want), "%s fenced %d times at once is listed %d times", b, len(same), countCanonical(listed, b))
		})

		s.it("CONC-002", func(ctx context.Context) {
			s.needList()
			blocks := s.v4(s.cfg.Concurrency, 32)
			errs := fanOut(ctx, blocks, func(ctx context.Context, b string) error { return s.fence(ctx, []string{b}) })
			expectConcurrentCodes(errs, "concurrent FenceClusterNetwork", blocks)
			s.expectFenced(ctx, acknowledged(blocks, errs), fmt.Sprintf("after %d concurrent fences", len(blocks)))
		})

		s.it("CONC-003", func(ctx context.Context) {
			s.needList()
			blocks := s.v4(s.cfg.Concurrency, 32)
			expectOK(s.fence(ctx, blocks), fmt.Sprintf("FenceClusterNetwork of %d blocks", len(blocks)))
			errs := fanOut(ctx, blocks, func(ctx context.Context, b string) error { return s.unfence(ctx, []string{b}) })
			expectConcurrentCodes(errs, "concurrent UnfenceClusterNetwork", blocks)
			s.expectNotFenced(ctx, acknowledged(blocks, errs), fmt.Sprintf("after %d concurrent unfences", len(blocks)))
		})
	})
}

// acknowledged are the blocks whose request answered OK.
func acknowledged(blocks []string, errs []error) []string {
	var out []string
	for i, err := range errs {
		if err == nil {
			out = append(out, blocks[i])
		}
	}
	return out
}

// firstOK returns nil if any request succeeded, else the first error.
func firstOK(errs []error) error {
	for _, err := range errs {
		if err == nil {
			return nil
		}
	}
	return errs[0]
}
