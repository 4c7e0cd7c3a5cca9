// The app of the moduleload scenario: besides the modules every app loads,
// it defines a dynamic assembly with one type in a dynamic module and
// creates an instance of it.
using System;
using System.Reflection;
using System.Reflection.Emit;

static class ModuleLoadApp {
    static int Main() {
        AssemblyBuilder asm = AssemblyBuilder.DefineDynamicAssembly(new AssemblyName("ConfDynamicAssembly"), AssemblyBuilderAccess.Run);
        ModuleBuilder mod = asm.DefineDynamicModule("ConfDynamicModule");
        Type t = mod.DefineType("ConfDynamicType", TypeAttributes.Public).CreateType();
        object o = Activator.CreateInstance(t);
        if (o == null) {
            return 1;
        }
        Console.WriteLine("created a {0}", o.GetType().Name);
        return 100;
    }
}
