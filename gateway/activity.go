package gateway

// busy notes a request: the run loop gives memory back once the daemon
// has gone quiet (Activity).
func (s *Hub) busy() { s.activity.Add(1) }

// Activity counts the requests the hub has seen since it was made. Safe
// for concurrent use; the count only grows.
func (s *Hub) Activity() uint64 { return s.activity.Load() }
