# tbench plot: samples of the 8 noisiest cases (by MAD / median), each divided by its median
# Render it again: cd to this folder, then: gnuplot noise.gp
set encoding utf8
set title 'samples of the 8 noisiest cases (by MAD / median), each divided by its median' noenhanced
set key outside right top vertical noenhanced
set grid
set style fill solid 0.4 border -1
set style boxplot outliers pointtype 7
set pointsize 0.4
set boxwidth 0.6
unset key
set ylabel 'sample / median of the case'
set label 1 'box: quartiles; whiskers: 1.5 IQR; points: outliers' at screen 0.01, screen 0.02 font ',8'
set xrange [0.3:8.7]
set bmargin 12
set rmargin 16
set xtics rotate by -30 font ',8' noenhanced ('matmul 64x64,64x64 f32 cpu[isa=scalar,threads=1]' 1, 'add@alloc 4000000,4000000 f32 cpu[isa=scalar,threads=1]' 2, 'add_ 4000000,4000000 f32 cpu[isa=scalar,threads=2]' 3, 'matmul 64x64,64x64 f32 cpu[isa=scalar,threads=2]' 4, 'add_relu_unfused 1000000,1000000 f32 cpu[isa=scalar,threads=2]' 5, 'adamw[lr=0.001,beta1=0.9,beta2=0.999,eps=1e-08,weight_decay=0.01,step=10] 1000000,1000000,1000000,1000000 f32 cpu[isa=scalar,threads=2]' 6, 'add@alloc 4000000,4000000 f32 cpu[isa=scalar,threads=2]' 7, 'add 4000000,4000000 f32 cpu[isa=auto,threads=1]' 8)
set terminal pngcairo size 900,540 font 'sans,9' noenhanced
set output 'noise.png'
plot for [i=0:7] 'noise.dat' index i using (i+1):1 with boxplot lc i+1
set output
