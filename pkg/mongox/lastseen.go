package mongox

import (
	"container/list"
	"sync"
)

// lastSeen remembers the last position known taken of the most recently used lists, at most
// max of them (least recently used first out), so that what it holds is bounded however many
// lists a process writes. A position it remembers is only ever raised: entries are never
// removed, so a position once taken stays taken.
type lastSeen struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *seenList, most recent first
	byKey map[string]*list.Element
}

type seenList struct {
	name string
	seq  int64
}

func newLastSeen(max int) *lastSeen {
	return &lastSeen{max: max, order: list.New(), byKey: map[string]*list.Element{}}
}

// get is the last position known taken of name.
func (s *lastSeen) get(name string) (int64, bool) {
	if s == nil {
		return 0, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.byKey[name]
	if !ok {
		return 0, false
	}
	s.order.MoveToFront(el)
	return el.Value.(*seenList).seq, true
}

// raise records that position seq of name is taken.
func (s *lastSeen) raise(name string, seq int64) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.byKey[name]; ok {
		e := el.Value.(*seenList)
		e.seq = max(e.seq, seq)
		s.order.MoveToFront(el)
		return
	}
	s.byKey[name] = s.order.PushFront(&seenList{name: name, seq: seq})
	if s.order.Len() > s.max {
		oldest := s.order.Back()
		s.order.Remove(oldest)
		delete(s.byKey, oldest.Value.(*seenList).name)
	}
}
