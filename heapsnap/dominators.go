package heapsnap

// The graph the dominators are computed on: the objects (0..n-1), one node
// per root kind (n+kind), one per named static field (n+numRootKinds+i,
// under the static kind's node), and a super-root (the last node) with an
// edge to each kind that has strong roots. Weak roots keep nothing alive
// and are left out.

// dominators returns, for every node of the graph, its immediate dominator
// (-1 for the super-root and for nodes it does not reach), and the nodes
// the super-root reaches in DFS preorder. It is Lengauer and Tarjan's
// algorithm with path compression (O(E log V)), written without recursion
// so that a list a million objects long does not overflow a stack.
func (s *Snapshot) dominators() (idom []int32, order []int32) {
	n := s.NumObjects()
	K := int(numRootKinds)
	S := len(s.Statics)
	M := n + K + S + 1
	root := int32(n + K + S)

	// successors of the virtual nodes
	// the successors of virtual node k (0..K+S-1): objects, and for the
	// static kind the named statics' nodes
	V := K + S
	target := func(r Root) (node int, succ int32) {
		if r.Static > 0 {
			return K + int(r.Static) - 1, r.Object
		}
		return int(r.Kind), r.Object
	}
	kindStart := make([]int32, V+1)
	for _, r := range s.roots {
		if r.Kind.Strong() {
			k, _ := target(r)
			kindStart[k+1]++
		}
	}
	kindStart[int(RootStatic)+1] += int32(S)
	for k := 1; k <= V; k++ {
		kindStart[k] += kindStart[k-1]
	}
	kindObjs := make([]int32, kindStart[V])
	fill := append([]int32(nil), kindStart[:V]...)
	for i := range S {
		kindObjs[fill[RootStatic]] = int32(n + K + i)
		fill[RootStatic]++
	}
	for _, r := range s.roots {
		if r.Kind.Strong() {
			k, o := target(r)
			kindObjs[fill[k]] = o
			fill[k]++
		}
	}
	succ := func(v int32) []int32 {
		switch {
		case int(v) < n:
			return s.Refs(int(v))
		case v == root:
			return nil // handled by the caller: the kind nodes
		default:
			k := int(v) - n
			return kindObjs[kindStart[k]:kindStart[k+1]]
		}
	}
	var rootSucc []int32
	for k := range K {
		if kindStart[k+1] > kindStart[k] {
			rootSucc = append(rootSucc, int32(n+k))
		}
	}
	successors := func(v int32) []int32 {
		if v == root {
			return rootSucc
		}
		return succ(v)
	}

	// 1. DFS preorder numbering
	dfnum := make([]int32, M)
	for i := range dfnum {
		dfnum[i] = -1
	}
	vertex := make([]int32, 0, M)
	parent := make([]int32, M) // by dfnum
	type frame struct {
		v    int32
		next int32
	}
	stack := []frame{{root, 0}}
	dfnum[root] = 0
	vertex = append(vertex, root)
	parent[0] = -1
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		ss := successors(top.v)
		if int(top.next) >= len(ss) {
			stack = stack[:len(stack)-1]
			continue
		}
		w := ss[top.next]
		top.next++
		if dfnum[w] >= 0 {
			continue
		}
		dfnum[w] = int32(len(vertex))
		parent[dfnum[w]] = dfnum[top.v]
		vertex = append(vertex, w)
		stack = append(stack, frame{w, 0})
	}
	N := len(vertex)

	// predecessors, by dfnum, of reached nodes
	predCount := make([]int32, N+1)
	for i := range N {
		for _, w := range successors(vertex[i]) {
			predCount[dfnum[w]+1]++
		}
	}
	for i := 1; i <= N; i++ {
		predCount[i] += predCount[i-1]
	}
	preds := make([]int32, predCount[N])
	pfill := append([]int32(nil), predCount[:N]...)
	for i := range N {
		for _, w := range successors(vertex[i]) {
			d := dfnum[w]
			preds[pfill[d]] = int32(i)
			pfill[d]++
		}
	}

	// 2. semidominators and implicit immediate dominators, in dfnum space
	semi := make([]int32, N)
	label := make([]int32, N)
	ancestor := make([]int32, N)
	dom := make([]int32, N)
	bucketHead := make([]int32, N)
	bucketNext := make([]int32, N)
	for i := range N {
		semi[i], label[i], ancestor[i], dom[i], bucketHead[i], bucketNext[i] = int32(i), int32(i), -1, -1, -1, -1
	}
	var path []int32
	eval := func(v int32) int32 {
		if ancestor[v] < 0 {
			return v
		}
		path = path[:0]
		for x := v; ancestor[x] >= 0 && ancestor[ancestor[x]] >= 0; x = ancestor[x] {
			path = append(path, x)
		}
		for i := len(path) - 1; i >= 0; i-- {
			x := path[i]
			a := ancestor[x]
			if semi[label[a]] < semi[label[x]] {
				label[x] = label[a]
			}
			ancestor[x] = ancestor[a]
		}
		return label[v]
	}
	for w := int32(N - 1); w >= 1; w-- {
		for _, v := range preds[predCount[w]:predCount[w+1]] {
			if u := eval(v); semi[u] < semi[w] {
				semi[w] = semi[u]
			}
		}
		bucketNext[w] = bucketHead[semi[w]]
		bucketHead[semi[w]] = w
		p := parent[w]
		ancestor[w] = p // link
		for v := bucketHead[p]; v >= 0; v = bucketNext[v] {
			if u := eval(v); semi[u] < semi[v] {
				dom[v] = u
			} else {
				dom[v] = p
			}
		}
		bucketHead[p] = -1
	}
	// 3. explicit immediate dominators
	for w := 1; w < N; w++ {
		if dom[w] != semi[w] {
			dom[w] = dom[dom[w]]
		}
	}

	idom = make([]int32, M)
	for i := range idom {
		idom[i] = -1
	}
	for w := 1; w < N; w++ {
		idom[vertex[w]] = vertex[dom[w]]
	}
	return idom, vertex
}
