# tbench plot: reduction ops measured at one size (f32): time per call (median, 95% CI) (part 1 of 2)
# Render it again: cd to this folder, then: gnuplot summary-reduction-f32.gp
set encoding utf8
set title 'reduction ops measured at one size (f32): time per call (median, 95% CI) (part 1 of 2)' noenhanced
set key below left horizontal maxcols 2 maxrows 40 noenhanced
set grid
set datafile missing '?'
set style data histograms
set style histogram errorbars gap 1 lw 1
set style fill solid 0.7 border -1
set logscale y
set format y '%.0s %cs'
set ylabel 'time per call'
set xtics rotate by -30 noenhanced
set bmargin 8
set terminal pngcairo size 900,544 font 'sans,9' noenhanced
set output 'summary-reduction-f32.png'
plot 'summary-reduction-f32.dat' using 2:3:4:xtic(1) lc rgb '#1f77b4' title 'cpu[isa=scalar,threads=1]', \
     'summary-reduction-f32.dat' using 5:6:7 lc rgb '#d62728' title 'cpu[isa=scalar,threads=2]', \
     'summary-reduction-f32.dat' using 8:9:10 lc rgb '#2ca02c' title 'cpu[isa=auto,threads=1]', \
     'summary-reduction-f32.dat' using 11:12:13 lc rgb '#9467bd' title 'cpu[isa=auto,threads=2]', \
     'summary-reduction-f32.dat' using 14:15:16 lc rgb '#ff7f0e' title 'numpy[threads=1,form=alloc]', \
     'summary-reduction-f32.dat' using 17:18:19 lc rgb '#17becf' title 'numpy[threads=1,form=out]', \
     'summary-reduction-f32.dat' using 20:21:22 lc rgb '#8c564b' title 'numpy[threads=2,form=alloc]', \
     'summary-reduction-f32.dat' using 23:24:25 lc rgb '#e377c2' title 'numpy[threads=2,form=out]'
set output
