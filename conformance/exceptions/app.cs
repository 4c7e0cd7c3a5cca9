// The app of the exceptions scenario: Thrower throws from a finally nested in
// a finally; Catcher catches it behind a filter. The profiler records every
// exception callback and compares the sequence with the one the test passes
// in EXCEPTIONS_EXPECTED.
using System;

static class ExceptionsApp {
    static void Thrower() {
        try {
        } finally {
            try {
            } finally {
                throw new InvalidOperationException("from the inner finally");
            }
        }
    }

    static bool Accept(Exception e) {
        return e.Message == "from the inner finally";
    }

    static void Catcher() {
        try {
            Thrower();
        } catch (Exception e) when (Accept(e)) {
            Console.WriteLine("caught: {0}", e.Message);
        }
    }

    static int Main() {
        Catcher();
        return 100;
    }
}
