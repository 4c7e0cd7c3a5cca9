// AlcColl.dll: the assembly alccycles loads into a fresh collectible
// AssemblyLoadContext on every cycle. Entry.Run makes the runtime load and
// JIT-compile its own classes and methods and also framework code
// instantiated over them (List<Cell>, Dictionary<int, Cell>, Array.IndexOf<Cell>,
// EqualityComparer<Cell>, List<Cell[]>), whose IDs live and die with it.
using System;
using System.Collections.Generic;

namespace AlcColl {
	public struct Cell {
		public int A;
		public long B;
		public Cell(int a) { A = a; B = 2L * a; }
	}

	public interface IShape { int Area(); }

	public class Square : IShape {
		readonly int side;
		public Square(int side) { this.side = side; }
		public virtual int Area() { return side * side; }
	}

	public class Big : Square {
		public Big(int side) : base(side) { }
		public override int Area() { return base.Area() + 1; }
	}

	public class Box<T> {
		readonly T value;
		public Box(T value) { this.value = value; }
		public T Get() { return value; }
		public Box<U> Map<U>(Func<T, U> f) { return new Box<U>(f(value)); }
	}

	public class Oops : Exception {
		public Oops(string m) : base(m) { }
	}

	public static class Entry {
		static int runs;

		static T First<T>(List<T> l) { return l[0]; }

		public static int Run(int seed) {
			int sum = 0;
			var cells = new List<Cell>();
			for (int i = 0; i < 8; i++) cells.Add(new Cell(seed + i));
			cells.Sort((x, y) => y.A.CompareTo(x.A));
			Cell[] arr = cells.ToArray();
			sum += Array.IndexOf(arr, new Cell(seed + 3));
			sum += EqualityComparer<Cell>.Default.Equals(arr[0], arr[1]) ? 1 : 0;
			var byKey = new Dictionary<int, Cell>();
			foreach (Cell c in arr) byKey[c.A] = c;
			sum += byKey[seed].A - seed;
			var grid = new List<Cell[]>();
			grid.Add(arr);
			sum += First(grid).Length + First(cells).A - seed;
			IShape[] shapes = { new Square(2), new Big(3) };
			foreach (IShape s in shapes) sum += s.Area();
			sum += new Box<Cell>(arr[7]).Map(c => c.A).Get() - seed;
			sum += new Box<string>("xy").Get().Length;
			try {
				throw new Oops("cycle " + seed);
			} catch (Oops) {
				sum++;
			}
			runs++;
			return sum + runs - 1;
		}
	}
}
