// The ASP.NET Core app of TestKestrel: Kestrel on a loopback port chosen
// by the system (printed as "listening http://127.0.0.1:PORT"), with two
// endpoints, /delay?i=N (awaits Task.Delay(20), then answers "delayed
// 2N") and /throw?i=N (awaits Task.Delay(5), then throws
// InvalidOperationException: Kestrel answers 500). It runs until its
// standard input says "quit" or ends, stops the host and prints what it
// served and how many errors were logged (Kestrel logs each /throw).
using System;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace KestrelApp
{
    public static class Program
    {
        static int delays, throws;

        public static async Task<int> Main(string[] args)
        {
            var builder = WebApplication.CreateSlimBuilder(new WebApplicationOptions { Args = args, EnvironmentName = "Production" });
            // A logger that is enabled at every level and prints nothing:
            // with logging off, EndpointMiddleware returns the endpoint's
            // Task as it is, and its AwaitRequestTask (which the test
            // instruments) never runs.
            builder.Logging.ClearProviders();
            builder.Logging.AddProvider(new CountingProvider());
            builder.Logging.SetMinimumLevel(LogLevel.Trace);
            builder.WebHost.UseUrls("http://127.0.0.1:0");
            var app = builder.Build();
            app.MapGet("/delay", (RequestDelegate)(async ctx =>
            {
                int i = int.Parse(ctx.Request.Query["i"].ToString());
                Interlocked.Increment(ref delays);
                await Task.Delay(20);
                await ctx.Response.WriteAsync("delayed " + (2 * i));
            }));
            app.MapGet("/throw", (RequestDelegate)(async ctx =>
            {
                int i = int.Parse(ctx.Request.Query["i"].ToString());
                Interlocked.Increment(ref throws);
                await Task.Delay(5);
                throw new InvalidOperationException("boom " + i);
            }));
            await app.StartAsync();
            var addresses = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>().Addresses;
            Console.WriteLine("listening " + addresses.First());
            Console.Out.Flush();
            string line;
            while ((line = Console.ReadLine()) != null && line != "quit")
            {
            }
            await app.StopAsync();
            Console.WriteLine("served delay=" + delays + " throw=" + throws);
            Console.WriteLine("logged errors=" + CountingProvider.Errors);
            Console.WriteLine("done");
            return 0;
        }
    }

    sealed class CountingProvider : ILoggerProvider, ILogger
    {
        public static int Errors;
        public ILogger CreateLogger(string category) => this;
        public void Dispose() { }
        public IDisposable BeginScope<TState>(TState state) where TState : notnull => null;
        public bool IsEnabled(LogLevel level) => true;
        public void Log<TState>(LogLevel level, EventId id, TState state, Exception exception, Func<TState, Exception, string> formatter)
        {
            if (level >= LogLevel.Error)
                Interlocked.Increment(ref Errors);
        }
    }
}
