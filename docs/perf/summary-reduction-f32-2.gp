# tbench plot: reduction ops measured at one size (f32): time per call (median, 95% CI) (part 2 of 2)
# Render it again: cd to this folder, then: gnuplot summary-reduction-f32-2.gp
set encoding utf8
set title 'reduction ops measured at one size (f32): time per call (median, 95% CI) (part 2 of 2)' noenhanced
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
set terminal pngcairo size 900,512 font 'sans,9' noenhanced
set output 'summary-reduction-f32-2.png'
plot 'summary-reduction-f32-2.dat' using 2:3:4:xtic(1) lc rgb '#1f77b4' title 'torch[threads=1,form=alloc]', \
     'summary-reduction-f32-2.dat' using 5:6:7 lc rgb '#d62728' title 'torch[threads=1,form=out]', \
     'summary-reduction-f32-2.dat' using 8:9:10 lc rgb '#2ca02c' title 'torch[threads=2,form=alloc]', \
     'summary-reduction-f32-2.dat' using 11:12:13 lc rgb '#9467bd' title 'torch[threads=2,form=out]'
set output
