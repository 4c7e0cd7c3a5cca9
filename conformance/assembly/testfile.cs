// The assembly the assembly scenario runs in collectible contexts.
static class ConfTestFile {
    static int Main(string[] args) {
        return 100;
    }
}
