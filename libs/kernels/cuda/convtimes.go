package cuda

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"sync"

	"carve.dev/libs/alloc"
	"carve.dev/libs/kernels"
)

// Recorded convolution times: what each way of running a convolution (cuDNN's algorithms, the
// own kernels) took on a device, so that the estimator can say what a workspace cap costs in time
// on a target it does not have (kernels.RecordedTimer). A record is one measurement the cudnn
// tactic makes at load (measureChoices: cuDNN's Find over every algorithm that fits the node's
// declared workspace, the own kernels timed beside them, the epilogue's time added to cuDNN's);
// with CARVE_CONV_TIMES=FILE set, the runner appends each as a line of JSON to FILE
// (tools/gpu/vision_bench.py --conv-times FILE records ResNet-50's and ViT-B/16's on the GPU host).
// convtimes_h200.jsonl holds those recorded on an H200, committed; a node's time at a cap is
// that of the fastest recorded choice within it. Records are matched by the node's convolution
// as cuDNN is told it (convDesc, less its workspace), its epilogue (or one that differs by the
// bias alone, when there is an epilogue pass either way) and the target's architecture and SM
// count.

//go:embed convtimes_h200.jsonl
var convTimesH200 []byte

// convRecord is one line of a conv-times file.
type convRecord struct {
	Device   string      `json:"device"` // the device's name, e.g. "NVIDIA H200"
	Arch     string      `json:"arch"`   // "sm_90"
	SMs      int         `json:"sms"`
	Cudnn    int         `json:"cudnn"` // cuDNN's version, 0 when it did not load
	Desc     convDesc    `json:"desc"`  // WsCap: the workspace the measurement admitted
	Epilogue int         `json:"epilogue"`
	Choices  []convTimed `json:"choices"` // fastest first
}

// convTimed is one recorded choice.
type convTimed struct {
	What string  `json:"what"`
	Ws   int64   `json:"ws"`
	Ms   float64 `json:"ms"`
}

// The epilogue's flags in a record: what the node adds after the convolution.
const (
	convEpiBias = 1 << iota
	convEpiZ
	convEpiRelu
)

// epilogueFlags are g's convEpi* flags.
func (g *convGeo) epilogueFlags() int {
	f := 0
	if g.bias {
		f |= convEpiBias
	}
	if g.sum {
		f |= convEpiZ
	}
	if g.relu {
		f |= convEpiRelu
	}
	return f
}

// convTimeKey matches a node to its records.
type convTimeKey struct {
	arch     string
	sms      int
	desc     convDesc // WsCap 0
	epilogue int
}

var convTimes struct {
	once sync.Once
	recs map[convTimeKey]convRecord
	err  error
}

// parseConvTimes reads a conv-times file: one convRecord per non-empty line. Of the records of
// one key, the one that admitted the most workspace stands (a run under a cap records only the
// choices within it), the later of equals.
func parseConvTimes(data []byte, into map[convTimeKey]convRecord) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var r convRecord
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("conv times, line %d: %w", line, err)
		}
		d := r.Desc
		d.WsCap = 0
		k := convTimeKey{r.Arch, r.SMs, d, r.Epilogue}
		if old, ok := into[k]; !ok || old.Desc.WsCap <= r.Desc.WsCap {
			into[k] = r
		}
	}
	return sc.Err()
}

// convTimeRecords are the committed records.
func convTimeRecords() (map[convTimeKey]convRecord, error) {
	convTimes.once.Do(func() {
		convTimes.recs = map[convTimeKey]convRecord{}
		convTimes.err = parseConvTimes(convTimesH200, convTimes.recs)
	})
	return convTimes.recs, convTimes.err
}

// recordedTime is the fastest recorded choice for c within ws bytes of workspace.
func (c *convCall) recordedTime(ws int64) (kernels.RecordedTime, bool) {
	recs, err := convTimeRecords()
	if err != nil {
		return kernels.RecordedTime{}, false
	}
	return c.recordedIn(recs, ws)
}

// recordedIn is recordedTime over recs.
func (c *convCall) recordedIn(recs map[convTimeKey]convRecord, ws int64) (kernels.RecordedTime, bool) {
	d := c.desc
	d.WsCap = 0
	r, ok := recs[convTimeKey{c.arch, c.sms, d, c.epilogue}]
	if !ok && c.epilogue&^convEpiBias != 0 {
		// The epilogue is one pass over the output with or without a bias once it has a Z or a
		// Relu: a record that differs from the node's by the bias alone stands in for it (an
		// export of random weights has a zero bias where the folded batch norm of a checkpoint
		// has one, and the exporter drops a zero bias).
		r, ok = recs[convTimeKey{c.arch, c.sms, d, c.epilogue ^ convEpiBias}]
	}
	if !ok {
		return kernels.RecordedTime{}, false
	}
	for _, ch := range r.Choices {
		if ch.Ws <= ws {
			return kernels.RecordedTime{Ms: ch.Ms, What: ch.What, Device: r.Device}, true
		}
	}
	return kernels.RecordedTime{}, false
}

// RecordedTime sums the recorded times of the instance's convolutions (a conv node has one),
// each within the "cudnn" part of r (none: algorithms that need no workspace); ok is false when
// it has none or one was not recorded (kernels.RecordedTimer).
func (i *instance) RecordedTime(r alloc.Recipe) (kernels.RecordedTime, bool) {
	part, _ := r.Part(convPart) // none: 0 bytes
	ws := part.Size
	var t kernels.RecordedTime
	found := false
	for _, st := range i.prog {
		c, ok := st.call.(*convCall)
		if !ok {
			continue
		}
		rt, ok := c.recordedTime(ws)
		if !ok {
			return kernels.RecordedTime{}, false
		}
		t.Ms += rt.Ms
		t.What, t.Device = rt.What, rt.Device
		found = true
	}
	return t, found
}
