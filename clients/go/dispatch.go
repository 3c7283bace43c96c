package analytics

import (
	"sync"
	"time"
)

// queued is a call waiting to be sent; seq numbers calls in the order they were queued, from 1.
type queued struct {
	seq uint64
	builtMessage
}

// dispatcher owns the queue and decides when batches leave: when flushAt calls are queued,
// when a queued call has waited flushAfter, on flush and on close; at most maxInFlight at once.
type dispatcher struct {
	cfg      config
	deliver  *deliverer
	callback Callback
	log      logger

	mu           sync.Mutex
	settledCond  *sync.Cond // broadcast whenever a batch finishes
	queue        []queued
	head         int
	lastSeq      uint64
	flushThrough uint64              // every call with seq ≤ flushThrough leaves without waiting for flushAt
	inFlight     map[uint64]struct{} // batches being sent, by the seq of their first call
	timer        *time.Timer
	timerGen     uint64
	closed       bool
	closeDone    chan struct{}
}

func newDispatcher(cfg config, d *deliverer, callback Callback, log logger) *dispatcher {
	disp := &dispatcher{cfg: cfg, deliver: d, callback: callback, log: log, inFlight: map[uint64]struct{}{}}
	disp.settledCond = sync.NewCond(&disp.mu)
	return disp
}

func (d *dispatcher) size() int { return len(d.queue) - d.head }

func (d *dispatcher) enqueue(m builtMessage) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return ErrClosed
	}
	if d.size() >= d.cfg.maxQueueSize {
		return ErrQueueFull
	}
	d.lastSeq++
	d.queue = append(d.queue, queued{seq: d.lastSeq, builtMessage: m})
	if d.log.verbose {
		d.log.debugf("queued %s (%d bytes)", m.id, len(m.json))
	}
	if d.size() >= d.cfg.flushAt {
		d.pumpLocked()
	} else if d.timer == nil {
		d.armTimerLocked()
	}
	return nil
}

// flush sends every call queued so far and waits until each is settled.
func (d *dispatcher) flush() {
	d.mu.Lock()
	defer d.mu.Unlock()
	through := d.lastSeq
	if through > d.flushThrough {
		d.flushThrough = through
	}
	d.pumpLocked()
	for !d.settledLocked(through) {
		d.settledCond.Wait()
	}
}

func (d *dispatcher) close() {
	d.mu.Lock()
	if d.closed {
		done := d.closeDone
		d.mu.Unlock()
		<-done
		return
	}
	d.closed = true
	d.closeDone = make(chan struct{})
	d.mu.Unlock()
	d.log.debugf("closing")
	d.flush()
	d.mu.Lock()
	d.disarmTimerLocked()
	close(d.closeDone)
	d.mu.Unlock()
	d.log.debugf("closed")
}

// pumpLocked starts as many batches as the in-flight limit allows and the flush rules call for.
func (d *dispatcher) pumpLocked() {
	for len(d.inFlight) < d.cfg.maxInFlight && d.size() > 0 &&
		(d.size() >= d.cfg.flushAt || d.queue[d.head].seq <= d.flushThrough) {
		rest := d.queue[d.head:]
		n := nextBatchSize(len(rest), func(i int) int { return len(rest[i].json) }, batchOverheadBytes, MaxBatchBytes, MaxBatchMessages)
		batch := make([]queued, n)
		copy(batch, rest[:n])
		d.takeLocked(n)
		d.sendLocked(batch)
	}
	if d.size() == 0 || d.lastSeq <= d.flushThrough {
		d.disarmTimerLocked()
	} else if d.timer == nil {
		d.armTimerLocked()
	}
}

// takeLocked drops n calls from the front, releasing memory as the queue drains.
func (d *dispatcher) takeLocked(n int) {
	for i := d.head; i < d.head+n; i++ {
		d.queue[i] = queued{}
	}
	d.head += n
	if d.head == len(d.queue) {
		d.queue = d.queue[:0]
		d.head = 0
	} else if d.head > 4096 && d.head*2 > len(d.queue) {
		d.queue = append([]queued(nil), d.queue[d.head:]...)
		d.head = 0
	}
}

func (d *dispatcher) sendLocked(batch []queued) {
	first := batch[0].seq
	d.inFlight[first] = struct{}{}
	go func() {
		jsons := make([][]byte, len(batch))
		for i := range batch {
			jsons[i] = batch[i].json
		}
		err := d.deliver.deliver(jsons)
		d.report(batch, err)
		d.mu.Lock()
		delete(d.inFlight, first)
		d.pumpLocked()
		d.settledCond.Broadcast()
		d.mu.Unlock()
	}()
}

// report tells the Callback (or, without one, the log) how a batch ended.
func (d *dispatcher) report(batch []queued, err *DeliveryError) {
	if d.callback == nil {
		if err != nil {
			d.log.printf("%d messages not delivered: %v", len(batch), err)
		}
		return
	}
	for _, q := range batch {
		if err != nil {
			d.callback.Failure(q.msg, err)
		} else {
			d.callback.Success(q.msg)
		}
	}
}

// settledLocked says whether every call with seq ≤ through has been delivered or reported.
func (d *dispatcher) settledLocked(through uint64) bool {
	if d.size() > 0 && d.queue[d.head].seq <= through {
		return false
	}
	for first := range d.inFlight {
		if first <= through {
			return false
		}
	}
	return true
}

func (d *dispatcher) armTimerLocked() {
	d.timerGen++
	gen := d.timerGen
	d.timer = time.AfterFunc(d.cfg.flushAfter, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if gen != d.timerGen || d.timer == nil {
			return // disarmed or replaced meanwhile
		}
		d.timer = nil
		d.log.debugf("flush timer fired")
		d.flushThrough = d.lastSeq
		d.pumpLocked()
	})
}

func (d *dispatcher) disarmTimerLocked() {
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
		d.timerGen++
	}
}
